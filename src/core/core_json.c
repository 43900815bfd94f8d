#include "core_json.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p;
    int line;
    char *err;
    size_t errlen;
    int depth;
} parser;

static core_json *fail(parser *ps, const char *what)
{
    if (ps->err && !ps->err[0])
        snprintf(ps->err, ps->errlen, "line %d: %s", ps->line, what);
    return NULL;
}

static void skip_space(parser *ps)
{
    while (*ps->p && isspace((unsigned char)*ps->p)) {
        if (*ps->p == '\n')
            ps->line++;
        ps->p++;
    }
}

static core_json *node(core_json_kind kind)
{
    core_json *j = calloc(1, sizeof *j);
    if (j)
        j->kind = kind;
    return j;
}

static char *parse_string_raw(parser *ps)
{
    if (*ps->p != '"')
        return (char *)fail(ps, "expected a string");
    ps->p++;
    size_t cap = 32, len = 0;
    char *out = malloc(cap);
    while (out && *ps->p && *ps->p != '"') {
        char c = *ps->p++;
        if ((unsigned char)c < 0x20) {
            free(out);
            return (char *)fail(ps, "control character in a string");
        }
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case '"':
            case '\\':
            case '/': c = e; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                /* Only ASCII escapes: shoal never writes others. */
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    char h = *ps->p++;
                    if (!isxdigit((unsigned char)h)) {
                        free(out);
                        return (char *)fail(ps, "bad \\u escape");
                    }
                    v = v * 16 +
                        (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower((unsigned char)h) - 'a' + 10));
                }
                c = v < 0x80 ? (char)v : '?';
                break;
            }
            default: free(out); return (char *)fail(ps, "bad escape in a string");
            }
        }
        if (len + 2 > cap) {
            char *bigger = realloc(out, cap *= 2);
            if (!bigger) {
                free(out);
                return NULL;
            }
            out = bigger;
        }
        out[len++] = c;
    }
    if (!out)
        return NULL;
    if (*ps->p != '"') {
        free(out);
        return (char *)fail(ps, "unterminated string");
    }
    ps->p++;
    out[len] = 0;
    return out;
}

static core_json *parse_value(parser *ps);

static core_json *parse_container(parser *ps, bool object)
{
    core_json *j = node(object ? CORE_JSON_OBJECT : CORE_JSON_ARRAY);
    if (!j)
        return NULL;
    ps->p++;
    core_json **tail = &j->child;
    skip_space(ps);
    if (*ps->p == (object ? '}' : ']')) {
        ps->p++;
        return j;
    }
    for (;;) {
        skip_space(ps);
        char *key = NULL;
        if (object) {
            key = parse_string_raw(ps);
            if (!key)
                break;
            skip_space(ps);
            if (*ps->p != ':') {
                free(key);
                fail(ps, "expected ':'");
                break;
            }
            ps->p++;
        }
        core_json *v = parse_value(ps);
        if (!v) {
            free(key);
            break;
        }
        v->key = key;
        *tail = v;
        tail = &v->next;
        skip_space(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == (object ? '}' : ']')) {
            ps->p++;
            return j;
        }
        fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
        break;
    }
    core_json_free(j);
    return NULL;
}

static core_json *parse_value(parser *ps)
{
    if (++ps->depth > 64)
        return fail(ps, "nested too deeply");
    skip_space(ps);
    core_json *j = NULL;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        j = parse_container(ps, c == '{');
    } else if (c == '"') {
        char *s = parse_string_raw(ps);
        if (s && (j = node(CORE_JSON_STRING)))
            j->string = s;
        else
            free(s);
    } else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
        if ((j = node(CORE_JSON_BOOL)))
            j->boolean = c == 't';
        ps->p += c == 't' ? 4 : 5;
    } else if (!strncmp(ps->p, "null", 4)) {
        j = node(CORE_JSON_NULL);
        ps->p += 4;
    } else if (c == '-' || isdigit((unsigned char)c)) {
        char *end;
        errno = 0;
        double v = strtod(ps->p, &end);
        if (end == ps->p || errno == ERANGE)
            j = fail(ps, "bad number");
        else if ((j = node(CORE_JSON_NUMBER))) {
            j->number = v;
            ps->p = end;
        }
    } else {
        j = fail(ps, c ? "unexpected character" : "unexpected end of text");
    }
    ps->depth--;
    return j;
}

core_json *core_json_parse(const char *text, char *err, size_t errlen)
{
    parser ps = {text, 1, err, errlen, 0};
    if (err && errlen)
        err[0] = 0;
    core_json *j = parse_value(&ps);
    if (j) {
        skip_space(&ps);
        if (*ps.p) {
            core_json_free(j);
            return fail(&ps, "text after the value");
        }
    }
    return j;
}

core_json *core_json_parse_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 >= cap) {
            if (cap > (1u << 24)) { /* a tuning file is a few KiB */
                free(text);
                text = NULL;
                snprintf(err, errlen, "file too large");
                break;
            }
            char *bigger = realloc(text, cap *= 2);
            if (!bigger) {
                free(text);
                text = NULL;
            } else {
                text = bigger;
            }
        }
    }
    fclose(f);
    if (!text)
        return NULL;
    text[len] = 0;
    core_json *j = core_json_parse(text, err, errlen);
    free(text);
    return j;
}

void core_json_free(core_json *j)
{
    while (j) {
        core_json *next = j->next;
        core_json_free(j->child);
        free(j->string);
        free(j->key);
        free(j);
        j = next;
    }
}

const core_json *core_json_get(const core_json *obj, const char *key)
{
    if (!obj || obj->kind != CORE_JSON_OBJECT)
        return NULL;
    for (const core_json *m = obj->child; m; m = m->next)
        if (m->key && !strcmp(m->key, key))
            return m;
    return NULL;
}

double core_json_number(const core_json *obj, const char *key, double fallback)
{
    const core_json *m = core_json_get(obj, key);
    return m && m->kind == CORE_JSON_NUMBER ? m->number : fallback;
}

const char *core_json_string(const core_json *obj, const char *key)
{
    const core_json *m = core_json_get(obj, key);
    return m && m->kind == CORE_JSON_STRING ? m->string : NULL;
}
