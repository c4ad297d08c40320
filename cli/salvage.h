/* salvage.h - r4 salvage (cli/salvage.c): copy out what a damaged volume
 * still holds.  Its own file, so r4 export --salvage can share it. */
#ifndef R4_CLI_SALVAGE_H
#define R4_CLI_SALVAGE_H

/* r4 salvage [--list] IMAGE [PATH] [DEST]; partition as --partition N
 * gave it (0: none).  The exit code. */
int cmd_salvage(int argc, char **argv, unsigned partition);

#endif
