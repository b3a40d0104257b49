/* Configuration attributes as handed from the config loader to whatever they configure
 * (backstores, devices, transports), with the line they came from so errors can name it. */
#ifndef UTGT_ATTR_H
#define UTGT_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "common/parse.h"

struct utgt_attr {
	const char *key;
	const char *value;
	int line; /* 0 when not from a file */
};

#endif
