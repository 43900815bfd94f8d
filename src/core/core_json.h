/* core_json: a small, strict JSON reader for shoal's own files (the tuning
 * file). Parses a whole text into a tree; lookups by key and index. Numbers
 * are doubles. Errors carry the line of the first problem. */
#ifndef SHOAL_CORE_JSON_H
#define SHOAL_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    CORE_JSON_NULL,
    CORE_JSON_BOOL,
    CORE_JSON_NUMBER,
    CORE_JSON_STRING,
    CORE_JSON_ARRAY,
    CORE_JSON_OBJECT
} core_json_kind;

typedef struct core_json {
    core_json_kind kind;
    bool boolean;
    double number;
    char *string; /* strings; also the key of an object member */
    char *key;
    struct core_json *child; /* first element or member */
    struct core_json *next;  /* next sibling */
} core_json;

/* NULL on error, with a message in err ("line 3: expected ':'"). */
core_json *core_json_parse(const char *text, char *err, size_t errlen);
core_json *core_json_parse_file(const char *path, char *err, size_t errlen);
void core_json_free(core_json *j);

/* The member of an object, or NULL. */
const core_json *core_json_get(const core_json *obj, const char *key);
/* A number member, or fallback when absent or not a number. */
double core_json_number(const core_json *obj, const char *key, double fallback);
/* A string member, or NULL. */
const char *core_json_string(const core_json *obj, const char *key);

#endif
