/* shoal settings: every SHOAL_* variable the library reads, from the one
 * table in src/core/core_config.c: the value this environment gives it and
 * its default (a malformed value is reported as the library reports it), or
 * README's Configuration table (--markdown). No MPI needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "shoal_cli.h"

int settings_main(int argc, char **argv)
{
    bool markdown = argc == 2 && !strcmp(argv[1], "--markdown");
    if (argc > 2 || (argc == 2 && !markdown)) {
        fprintf(stderr, "usage: shoal settings [--markdown]\n");
        return 2;
    }
    if (markdown) {
        core_settings_markdown(stdout);
        return 0;
    }
    const core_config *c = core_config_get();
    int count;
    const core_setting *s = core_settings(&count);
    printf("%-20s %-8s %-24s %s\n", "variable", "", "value", "default");
    for (int i = 0; i < count; i++) {
        char value[1100];
        core_setting_format(&s[i], c, value, sizeof value);
        const char *text = getenv(s[i].name);
        bool set = text && *text;
        printf("%-20s %-8s %-24s %s%s\n", s[i].name, set ? "(set)" : "", *value ? value : "(empty)", s[i].default_text,
               s[i].shared ? "  [alike on every rank]" : "");
    }
    return 0;
}
