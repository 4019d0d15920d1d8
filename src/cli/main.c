#include <stdio.h>
int main(void) { puts("topocc"); return 0; }
