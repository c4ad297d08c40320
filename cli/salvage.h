/* salvage.h - r4 export --salvage (cli/salvage.c): copy out what a
 * damaged volume still holds. */
#ifndef R4_CLI_SALVAGE_H
#define R4_CLI_SALVAGE_H

/* r4 export --salvage [--list] IMAGE [PATH] [DEST] (argv without
 * --salvage); partition as --partition N
 * gave it (0: none).  The exit code. */
int cmd_salvage(int argc, char **argv, unsigned partition);

#endif
