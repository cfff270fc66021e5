// SwiftPM links an executable target NAME with `--defsym main=NAME_main` (NAME with `-` as `_`),
// so libFuzzer's own `main` is never pulled in. Each harness's NAME_main is here: it hands the
// command line to libFuzzer's driver with the harness's LLVMFuzzerTestOneInput.
#include <stddef.h>
#include <stdint.h>
#include "fuzz_main.h"

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HARNESS(name) int name##_main(int argc, char **argv) { return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput); }
HARNESS(fuzz_jpeg)
HARNESS(fuzz_wav)
HARNESS(fuzz_edid)
HARNESS(fuzz_format)
HARNESS(fuzz_parsing)
