/* cmd_train_accuracy.c - placeholder until the command lands. */
#include <stdio.h>
#include "cli/cli.h"
int cmd_train_accuracy(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "topocc: this command is not available yet\n");
    return 1;
}
