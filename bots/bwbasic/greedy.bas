10 REM greedy.bas - Othello bot for bwBASIC (Debian bwbasic 2.20pl2).
20 REM Mailbox protocol v1 (see PROTOCOL.md). Plays the move that turns
30 REM over the most discs; ties: the first in reading order a1 b1 .. a2 ..
40 REM   tournament.toml: command = ["bwbasic", "bots/bwbasic/greedy.bas"]
50 REM   by hand: cd into the mailbox folder first (see line 4800)
60 REM            and run: bwbasic /path/to/bots/bwbasic/greedy.bas
70 REM bwbasic cannot import a library, so the shared mailbox code is in
80 REM this file: lines 1000-4999. Copy them into your own bot unchanged;
90 REM write your move choice in lines 5000-5999 (it sets A$).
100 REM
110 REM bwbasic traps (all checked with 2.20pl2):
120 REM - It prints a banner on stdout when it starts. Harmless here.
130 REM - END drops into the interactive "bwBASIC:" prompt, which reads
140 REM   stdin; always stop with SYSTEM. (The referee gives bots
150 REM   stdin = /dev/null, so even END would exit there, but not in a
160 REM   terminal.)
170 REM - No SLEEP statement, and nothing else that waits (no blocking
180 REM   read is possible either). A shell command typed as a program line
190 REM   runs, but from then on bwbasic runs EVERY following line as a
200 REM   shell command. The least bad wait found: FILES runs the shell
210 REM   command in BWB.FILES$ with its argument, so BWB.FILES$ = "sleep"
220 REM   and FILES "0.01" sleeps 10 ms (each costs a fork of sh + sleep,
230 REM   about 2 ms of CPU). So the bot looks at once after answering,
240 REM   then waits 2, 4, 8, 16 ms, 32 ms six times, then 64, 128, 256
241 REM   and 512 ms (about 1 % CPU while the opponent thinks 5 s).
242 REM   A counted busy loop would burn 100 %.
243 REM - OPEN "R" (random access) writes a record in place without
244 REM   truncating: out.txt is one 128-byte record (LSET pads with
245 REM   spaces), the fixed-length answer of PROTOCOL.md.
246 REM - Ctrl-C mostly kills only the sleep (system() ignores it); stop a
247 REM   bot started by hand with kill (TERM), as the referee does.
250 REM - Variable names are case-sensitive (x and X are two variables);
260 REM   keywords are not.
270 REM - ON ERROR GOTO is not supported; ON ERROR GOSUB is, and RETURN
280 REM   goes on after the statement that failed. ERR is always -1.
290 REM - OPEN "R" (random access) CREATES a missing file; bots must never
300 REM   create in.txt, so read it with OPEN ... FOR INPUT only.
310 REM - ENVIRON$ of an unset variable returns garbage bytes, not "".
320 REM - There is no way to read command-line arguments (no COMMAND$).
330 REM - LINE INPUT drops CR and LF, so it cannot tell whether the last
340 REM   line was complete: compare LOF() with the lengths read.
350 REM - FOR J = 2 TO 1 runs its body once: guard empty loops with IF.
360 REM - STR$(7) is " 7" (leading space); PRINT of numbers adds spaces.
370 REM   Keep the seq as the string you read, never as a number.
380 REM - \ is NOT integer division (17 \ 5 = 3.4): use INT(A / B).
390 REM - TIMER counts whole seconds only.
400 REM - It is slow: roughly 250000 simple statements per second.
410 REM
500 REM ---- set-up -------------------------------------------------------
510 ON ERROR GOSUB 4900
520 GOSUB 4800
530 IN$ = MB$ + "/in.txt"
540 OU$ = MB$ + "/out.txt"
550 LF$ = CHR$(10)
560 AN$ = ""
570 BWB.FILES$ = "sleep"
580 PL = 0
590 DIM L$(4), WD$(8), B$(64), MV(64), FL(64), DR(8), DC(8), NP$(14)
600 FOR K = 1 TO 8
610 READ DR(K), DC(K)
620 NEXT K
630 DATA -1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1
640 FOR K = 1 TO 14
650 READ NP$(K)
660 NEXT K
670 DATA "0.002", "0.004", "0.008", "0.016", "0.032", "0.032", "0.032"
675 DATA "0.032", "0.032", "0.032", "0.064", "0.128", "0.256", "0.512"
680 GOSUB 2100
700 REM ---- main loop: wait for a message, answer it ---------------------
710 GOSUB 1000
720 W$ = WD$(1)
730 IF W$ = "NEW" THEN A$ = "READY" : GOTO 800
740 IF W$ = "END" THEN A$ = "BYE" : GOTO 800
750 IF W$ <> "TURN" THEN A$ = "OK" : GOTO 800
760 GOSUB 3000
770 A$ = "pass"
780 IF NM > 0 THEN GOSUB 5000
800 GOSUB 2000
810 GOTO 710
1000 REM ---- wait until in.txt holds a new message ------------------------
1001 REM      sets T$ (its text), WD$(1..NW) (its words), ID$, SQ$
1010 GOSUB 1100
1020 IF NN = 0 THEN GOTO 1030
1022 PL = 0
1024 GOSUB 1400
1026 RETURN
1030 PL = PL + 1
1040 IF PL > 14 THEN PL = 14
1050 FILES NP$(PL)
1060 GOTO 1010
1100 REM ---- one look at in.txt: NN = 1 if it holds a new complete message
1110 NN = 0
1120 OK = 1
1130 OPEN IN$ FOR INPUT AS #1
1140 IF OK = 0 THEN RETURN
1150 N = 0
1160 SL = 0
1170 IF EOF(1) THEN GOTO 1220
1180 LINE INPUT #1, X$
1190 N = N + 1
1195 L$(N) = X$
1200 SL = SL + LEN(X$)
1210 IF N < 4 THEN GOTO 1170
1220 SZ = LOF(1)
1230 CLOSE #1
1240 IF OK = 0 OR N < 4 THEN RETURN
1250 REM complete only if the size matches four lines ended by LF or CR LF,
1255 REM or is 512: the referee's padded in.txt (PROTOCOL.md)
1260 IF SZ <> SL + 4 AND SZ <> SL + 8 AND SZ <> 512 THEN RETURN
1262 REM LINE INPUT cannot see whether line 4 ended in LF; a message being
1263 REM written in place (on a Windows share) lacks that LF and shows the
1264 REM padding as the end of line 4. A text never ends in a space.
1265 IF RIGHT$(L$(4), 1) = " " THEN RETURN
1270 IF L$(1) <> "referee" OR L$(3) = "" OR L$(3) = AN$ THEN RETURN
1280 ID$ = L$(2)
1290 SQ$ = L$(3)
1300 T$ = L$(4)
1310 NN = 1
1320 RETURN
1400 REM ---- split T$ into WD$(1..NW) -----------------------------------
1410 NW = 0
1420 X$ = T$ + " "
1430 P = INSTR(X$, " ")
1440 IF P = 0 OR NW >= 8 THEN RETURN
1450 NW = NW + 1
1460 WD$(NW) = LEFT$(X$, P - 1)
1470 X$ = MID$(X$, P + 1)
1480 GOTO 1430
2000 REM ---- answer A$: out.txt is one 128-byte record, written in place
2010 OK = 1
2020 OPEN "R", #2, OU$, 128
2030 IF OK = 0 THEN PRINT "cannot write "; OU$ : RETURN
2035 FIELD #2, 128 AS RC$
2040 LSET RC$ = ID$ + LF$ + "referee" + LF$ + SQ$ + LF$ + A$ + LF$
2045 PUT #2, 1
2050 CLOSE #2
2060 AN$ = SQ$
2070 RETURN
2100 REM ---- at start: out.txt made 128 bytes (spaces) unless it is ------
2110 OK = 1
2120 OPEN OU$ FOR INPUT AS #2
2130 IF OK = 0 THEN GOTO 2170
2140 SZ = LOF(2)
2150 CLOSE #2
2160 IF SZ = 128 THEN RETURN
2170 OK = 1
2180 OPEN OU$ FOR OUTPUT AS #2
2190 IF OK = 0 THEN RETURN
2200 PRINT #2, SPACE$(128);
2210 CLOSE #2
2220 RETURN
3000 REM ---- read the TURN in WD$() into B$(0..), SZ, ME$, OP$;
3001 REM      list the legal moves: MV(1..NM) squares, FL(1..NM) flips
3010 BD$ = WD$(3)
3020 ME$ = "O"
3030 OP$ = "X"
3040 IF WD$(2) = "black" THEN ME$ = "X" : OP$ = "O"
3050 NB = LEN(BD$)
3060 SZ = 4
3070 IF NB = 36 THEN SZ = 6
3080 IF NB = 64 THEN SZ = 8
3090 FOR I = 0 TO NB - 1
3100 B$(I) = MID$(BD$, I + 1, 1)
3110 NEXT I
3120 NM = 0
3130 FOR I = 0 TO NB - 1
3140 P$ = ME$
3150 GOSUB 4000
3160 IF F > 0 THEN NM = NM + 1 : MV(NM) = I : FL(NM) = F
3170 NEXT I
3180 RETURN
4000 REM ---- F = discs that P$ turns over by playing on square I --------
4010 F = 0
4020 IF B$(I) <> "-" THEN RETURN
4030 Q$ = "X"
4040 IF P$ = "X" THEN Q$ = "O"
4050 R0 = INT(I / SZ)
4060 C0 = I - R0 * SZ
4070 FOR K = 1 TO 8
4080 R = R0 + DR(K)
4090 C = C0 + DC(K)
4100 NF = 0
4110 IF R < 0 OR R >= SZ OR C < 0 OR C >= SZ THEN GOTO 4170
4120 IF B$(R * SZ + C) <> Q$ THEN GOTO 4160
4130 NF = NF + 1
4140 R = R + DR(K) : C = C + DC(K)
4150 GOTO 4110
4160 IF NF > 0 AND B$(R * SZ + C) = P$ THEN F = F + NF
4170 NEXT K
4180 RETURN
4700 REM ---- SN$ = name of square I, e.g. "d3" ----------------------------
4710 RW = INT(I / SZ)
4720 SN$ = CHR$(97 + I - RW * SZ) + CHR$(49 + RW)
4730 RETURN
4800 REM ---- MB$ = mailbox folder: always "." (the working directory) ---
4810 REM TRAP: bwbasic 2.20 crashes (SIGSEGV) in OPEN when a file name is
4820 REM longer than about 40 characters, and a mailbox's absolute path
4830 REM (e.g. /home/me/board/players/bwbasic-greedy.1/in.txt) easily is.
4840 REM So this bot never uses $TOURNAMENT_MAILBOX: the referee starts it
4850 REM with the mailbox as working directory; by hand, cd into the
4860 REM mailbox folder first.
4870 MB$ = "."
4890 RETURN
4900 REM ---- error handler: a failed OPEN sets OK = 0, then goes on --------
4910 OK = 0
4920 RETURN
5000 REM ---- your move: choose from MV(1..NM), set A$ ----------------------
5010 REM greedy: the legal move with the most flips
5020 BK = 1
5030 IF NM < 2 THEN GOTO 5070
5040 FOR J = 2 TO NM
5050 IF FL(J) > FL(BK) THEN BK = J
5060 NEXT J
5070 I = MV(BK)
5080 GOSUB 4700
5090 A$ = SN$
5100 RETURN
