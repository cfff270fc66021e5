// Entry points for the harnesses; see fuzz_main.c.
#ifndef FUZZ_MAIN_H
#define FUZZ_MAIN_H
#endif
