-- An unknown dot-command and a dot-command with a wrong argument, with
-- bail off so both are reported; the exit status is still 1.
-- args: --no-bail
.tables
.frobnicate now
.mode fancy
.headers maybe
.mode
