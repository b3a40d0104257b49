/* libFuzzer target for the scst.conf loader (lexer, parser, model, printer).
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -I. \
 *     tests/fuzz/fuzz_conf.c <scsi/ and target/ objects built with the same sanitizers> \
 *     -luring -lisal -lcrypto -lm -o build-fuzz/fuzz_conf
 *   build-fuzz/fuzz_conf conf/      # the examples are the seed corpus
 * Invariant checked: a config is returned exactly when no error was reported. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "target/tgt_config.h"

static void quiet(struct diag *d, bool error, int line, const char *msg)
{
	(void)d;
	(void)error;
	(void)line;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag d = {.file = "fuzz.conf", .emit = quiet};
	struct tgt_config *cfg = tgt_config_parse((const char *)data, size, "fuzz.conf", &d);

	if ((cfg != NULL) != (d.errors == 0))
		abort();
	if (cfg) {
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			tgt_config_print(cfg, null);
			fclose(null);
		}
	}
	tgt_config_free(cfg);
	return 0;
}
