// The first-legal-move bot written on the shipped library
// (bots/js/mailbox.js, copied next to this file by the bench): what a user
// of the library gets. The same logic as arena_first.js.
'use strict';
const path = require('path');
const mb = require(path.join(__dirname, 'mailbox.js'));

mb.run((turn) => Math.min(...turn.moves.keys()));
