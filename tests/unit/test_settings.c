/* The settings table (core_settings): every row parses its default when
 * unset, reads well-formed text, gives its default back for malformed text,
 * prints a value that reads back to itself, and only the rows every rank
 * must share move the fingerprint. Values are checked against what each
 * kind means, computed here, not against the parser's own output alone. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "unit.h"

static void clear_environment(void)
{
    int count;
    const core_setting *s = core_settings(&count);
    for (int i = 0; i < count; i++)
        unsetenv(s[i].name);
}

static void value_of(const char *name, char *buf, size_t len)
{
    core_setting_format(core_setting_find(name), core_config_get(), buf, len);
}

/* Sets name=text, reloads, and returns the value as the table prints it. */
static const char *read_as(const char *name, const char *text)
{
    static char buf[1100];
    setenv(name, text, 1);
    core_config_reload();
    value_of(name, buf, sizeof buf);
    unsetenv(name);
    return buf;
}

static void test_rows(void)
{
    int count;
    const core_setting *s = core_settings(&count);
    CHECK(count >= 12, "%d rows", count);
    for (int i = 0; i < count; i++) {
        CHECK(!strncmp(s[i].name, "SHOAL_", 6), "%s", s[i].name);
        CHECK(s[i].description && *s[i].description && s[i].default_text && *s[i].default_text, "%s documented",
              s[i].name);
        CHECK(core_setting_find(s[i].name) == &s[i], "%s found", s[i].name);
        CHECK(s[i].offset + s[i].size <= sizeof(core_config), "%s field inside core_config", s[i].name);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(s[i].name, s[j].name) && s[i].offset != s[j].offset, "%s and %s distinct", s[i].name,
                  s[j].name);
        CHECK(s[i].kind != CORE_SETTING_CHOICE || (s[i].words && s[i].words[0].word), "%s has words", s[i].name);
        CHECK(s[i].kind != CORE_SETTING_INT || (s[i].lo <= s[i].value && s[i].value <= s[i].hi), "%s default in range",
              s[i].name);
    }
    CHECK(core_setting_find("SHOAL_NOTHING") == NULL, "unknown name");
}

static void test_defaults(void)
{
    clear_environment();
    core_config_reload();
    const core_config *c = core_config_get();
    CHECK(!c->disabled && c->disabled_colls == 0 && c->verbose == 0 && c->shm_size == 0, "off-by-default settings");
    CHECK(c->comm_warmup == CORE_COMM_WARMUP_DEFAULT && c->cma == CORE_CMA_AUTO && c->spin == -1, "defaults");
    CHECK(c->timeout_s == 0 && !c->lanes[0] && !c->algo[0] && !c->tuning_file[0] && c->probe, "defaults");
    CHECK(c->across_nodes == CORE_ACROSS_NODES_PRICED && c->node_cliques == 1 && c->clique_order == CORE_CLIQUES_MODULO,
          "priced two levels, real nodes only");
}

static void test_parsing(void)
{
    clear_environment();
    /* Each kind: well-formed text and what it must mean. */
    CHECK(!strcmp(read_as("SHOAL_DISABLE", "yes"), "1") && !strcmp(read_as("SHOAL_DISABLE", "ON"), "1"), "bool");
    CHECK(!strcmp(read_as("SHOAL_PROBE", "false"), "0") && !strcmp(read_as("SHOAL_PROBE", "0"), "0"), "bool");
    CHECK(!strcmp(read_as("SHOAL_COMM_WARMUP", "0"), "0") && !strcmp(read_as("SHOAL_COMM_WARMUP", "123"), "123"),
          "int");
    CHECK(!strcmp(read_as("SHOAL_VERBOSE", "2"), "2"), "int field of int size");
    CHECK(!strcmp(read_as("SHOAL_SHM_SIZE", "64M"), "67108864") && !strcmp(read_as("SHOAL_SHM_SIZE", "4096"), "4096"),
          "size");
    CHECK(!strcmp(read_as("SHOAL_TIMEOUT", "2.5"), "2.5"), "seconds");
    CHECK(!strcmp(read_as("SHOAL_CMA", "off"), "off") && !strcmp(read_as("SHOAL_CMA", "0"), "off") &&
              !strcmp(read_as("SHOAL_CMA", "on"), "auto"),
          "choice and its aliases");
    CHECK(!strcmp(read_as("SHOAL_DISABLE_COLL", "allreduce, bcast"), "bcast,allreduce"), "collective list");
    char all[512];
    snprintf(all, sizeof all, "%s", read_as("SHOAL_DISABLE_COLL", "all"));
    for (int c = 0; c < CORE_COLL_COUNT; c++)
        CHECK(strstr(all, core_coll_name(c)) != NULL, "all has %s", core_coll_name(c));
    CHECK(!strcmp(read_as("SHOAL_ALGO", "bcast:tree"), "bcast:tree"), "text");
    CHECK(!strcmp(read_as("SHOAL_TUNING_FILE", "/tmp/x.json"), "/tmp/x.json"), "text");

    /* Malformed text: the default (the warning goes to stderr once). */
    CHECK(!strcmp(read_as("SHOAL_DISABLE", "perhaps"), "0"), "bad bool");
    CHECK(!strcmp(read_as("SHOAL_PROBE", "perhaps"), "1"), "bad bool");
    CHECK(!strcmp(read_as("SHOAL_COMM_WARMUP", "-1"), "8") && !strcmp(read_as("SHOAL_COMM_WARMUP", "8x"), "8"),
          "bad int");
    CHECK(!strcmp(read_as("SHOAL_VERBOSE", "10"), "0"), "int out of range");
    CHECK(!strcmp(read_as("SHOAL_NODE_CLIQUES", "0"), "1"), "int below its range");
    CHECK(!strcmp(read_as("SHOAL_SHM_SIZE", "12Q"), "0"), "bad size");
    CHECK(!strcmp(read_as("SHOAL_TIMEOUT", "-1"), "0") && !strcmp(read_as("SHOAL_TIMEOUT", "nan"), "0"), "bad seconds");
    CHECK(!strcmp(read_as("SHOAL_CMA", "maybe"), "auto"), "bad choice");
    /* The node forms' fixed leaders have one name in all three, the singular too. */
    CHECK(!strcmp(read_as("SHOAL_NODE_BCAST", "leader"), "leaders"), "bcast: leader is leaders");
    CHECK(!strcmp(read_as("SHOAL_NODE_BCAST", "leaders"), "leaders"), "bcast: leaders");
    CHECK(!strcmp(read_as("SHOAL_NODE_REDUCE", "leader"), "leaders"), "reduce: leader is leaders");
    CHECK(!strcmp(read_as("SHOAL_NODE_ALLREDUCE", "leader"), "leaders"), "allreduce: leader is leaders");
    CHECK(!strcmp(read_as("SHOAL_DISABLE_COLL", "bcast,nothing"), "bcast"), "unknown names dropped, the rest kept");
    char longer[2048];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    CHECK(!strcmp(read_as("SHOAL_ALGO", longer), ""), "too long a text is ignored, not cut");
    CHECK(!strcmp(read_as("SHOAL_DISABLE", ""), "0"), "empty is unset");
}

/* A printed value reads back to itself: shoal settings' output can be pasted. */
static void test_round_trip(void)
{
    static const char *const samples[][2] = {
        {"SHOAL_DISABLE", "1"},
        {"SHOAL_DISABLE_COLL", "gather,alltoallv"},
        {"SHOAL_VERBOSE", "1"},
        {"SHOAL_SHM_SIZE", "1G"},
        {"SHOAL_COMM_WARMUP", "3"},
        {"SHOAL_CMA", "off"},
        {"SHOAL_SPIN", "100"},
        {"SHOAL_TIMEOUT", "30"},
        {"SHOAL_LANES", "cma+host"},
        {"SHOAL_ALGO", "reduce:flat"},
        {"SHOAL_TUNING_FILE", "t.json"},
        {"SHOAL_PROBE", "0"},
        {"SHOAL_ACROSS_NODES", "two"},
        {"SHOAL_NODE_CLIQUES", "3"},
        {"SHOAL_NODE_CLIQUE_ORDER", "blocks"},
        {"SHOAL_NODE_SEGMENT", "1M"},
        {"SHOAL_NODE_BCAST", "first"},
        {"SHOAL_NODE_REDUCE", "leaders"},
        {"SHOAL_NODE_ALLREDUCE", "rails"},
        {"SHOAL_ALLTOALL_MAP", "map.txt"},
        {"SHOAL_SHMEM_GLOBALS", "0"},
        {"SHOAL_THREAD_HANDOFF_BYTES", "64K"},
    };
    int count;
    core_settings(&count);
    CHECK(count == (int)(sizeof samples / sizeof samples[0]), "a sample per row");
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char first[1100];
        snprintf(first, sizeof first, "%s", read_as(samples[i][0], samples[i][1]));
        CHECK(!strcmp(read_as(samples[i][0], first), first), "%s=%s prints %s, which reads back", samples[i][0],
              samples[i][1], first);
    }
}

/* Only shared rows move the fingerprint, and each of them does. */
static void test_fingerprint(void)
{
    static const char *const samples[][2] = {
        {"SHOAL_DISABLE", "1"},        {"SHOAL_DISABLE_COLL", "bcast"}, {"SHOAL_VERBOSE", "1"},
        {"SHOAL_SHM_SIZE", "1G"},      {"SHOAL_COMM_WARMUP", "3"},      {"SHOAL_CMA", "off"},
        {"SHOAL_SPIN", "100"},         {"SHOAL_TIMEOUT", "30"},         {"SHOAL_LANES", "cma"},
        {"SHOAL_ALGO", "reduce:flat"}, {"SHOAL_TUNING_FILE", "t.json"}, {"SHOAL_PROBE", "0"},
    };
    clear_environment();
    core_config_reload();
    uint64_t base = core_config_get()->fingerprint;
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        const core_setting *s = core_setting_find(samples[i][0]);
        setenv(samples[i][0], samples[i][1], 1);
        core_config_reload();
        bool moved = core_config_get()->fingerprint != base;
        CHECK(moved == s->shared, "%s moves the fingerprint: %d, shared: %d", s->name, moved, s->shared);
        CHECK(core_config_fingerprint(core_config_get()) == core_config_get()->fingerprint, "recomputed alike");
        unsetenv(samples[i][0]);
    }
    /* The ones the collective decisions hang on are shared. */
    const char *must_share[] = {"SHOAL_DISABLE", "SHOAL_DISABLE_COLL", "SHOAL_COMM_WARMUP",
                                "SHOAL_LANES",   "SHOAL_ALGO",         "SHOAL_PROBE"};
    for (size_t i = 0; i < sizeof must_share / sizeof must_share[0]; i++)
        CHECK(core_setting_find(must_share[i])->shared, "%s shared", must_share[i]);
}

int main(void)
{
    test_rows();
    test_defaults();
    test_parsing();
    test_round_trip();
    test_fingerprint();
    clear_environment();
    return unit_done("test_settings");
}
