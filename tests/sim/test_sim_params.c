/* Parameters: every one has a default, a doc line and survives a config file
 * round trip; bad values give errors that name the field (and the file line);
 * sizes, phase lists and load lists parse as documented. */
#include "sim_params.h"
#include "sim_test.h"
#include "sim_traffic.h"

#include <unistd.h>

static void expect_error(const char *key, const char *value, const char *needle)
{
    sim_params p;
    sim_params_default(&p);
    sim_err err;
    memset(&err, 0, sizeof err);
    int rc = sim_param_set(&p, key, value, &err);
    CHECK(rc != 0, "%s=%s must be rejected", key, value);
    CHECK(strstr(err.msg, needle) != NULL, "%s=%s: error '%s' lacks '%s'", key, value, err.msg, needle);
}

int main(void)
{
    sim_params p, q;
    sim_params_default(&p);
    /* the documented defaults of the router */
    CHECK(p.flit_size == 8 && p.packet_flits == 64 && p.link_width == 8, "paper's packets and links");
    CHECK(p.vcs == 8 && p.vc_depth == 32, "8 VCs of 32 flits");
    CHECK(p.msg == 32768 && p.barrier == 1 && p.tie == SIM_TIE_PARITY && p.dateline == 1, "traffic defaults");
    CHECK(!strcmp(p.topo, "torus:8x8"), "default topology");
    int count = 0;
    for (const sim_param_desc *d = sim_param_table(); d->name; d++, count++) {
        CHECK(d->def && d->def[0], "%s has no default", d->name);
        CHECK(d->doc && strlen(d->doc) > 10, "%s has no documentation", d->name);
    }
    CHECK(count >= 30, "only %d parameters in the table", count);

    /* config file round trip: change everything, write, read back */
    sim_err err;
    REQUIRE(sim_param_set(&p, "vcs", "4", &err) == 0, "%s", err.msg);
    REQUIRE(sim_param_set(&p, "msg", "1M", &err) == 0, "%s", err.msg);
    REQUIRE(sim_param_set(&p, "tie", "node", &err) == 0, "%s", err.msg);
    REQUIRE(sim_param_set(&p, "barrier", "off", &err) == 0, "%s", err.msg);
    REQUIRE(sim_param_set(&p, "map_t0", "0.25", &err) == 0, "%s", err.msg);
    REQUIRE(sim_param_set(&p, "topo", "fattree:4,3", &err) == 0, "%s", err.msg);
    REQUIRE(sim_param_set_kv(&p, " phases = 1-5,9 ", &err) == 0, "%s", err.msg);
    CHECK(p.msg == 1 << 20 && p.vcs == 4 && p.tie == SIM_TIE_NODE && !p.barrier && p.map_t0 == 0.25, "set values");
    char path[] = "/tmp/shoal-sim-params-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0, "mkstemp");
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# a comment line\n\n");
    sim_params_write(&p, f);
    fclose(f);
    sim_params_default(&q);
    CHECK(sim_params_load(&q, path, &err) == 0, "load: %s", err.msg);
    CHECK(!memcmp(&p, &q, sizeof p), "config file round trip changed a value");

    /* errors name the file, the line and the field */
    f = fopen(path, "w");
    fprintf(f, "vcs = 4\n# fine so far\nvc_depth = zero\n");
    fclose(f);
    CHECK(sim_params_load(&q, path, &err) != 0 && strstr(err.msg, "line 3") && strstr(err.msg, "field 'vc_depth'"),
          "bad config line: %s", err.msg);
    f = fopen(path, "w");
    fprintf(f, "link_widht = 8\n");
    fclose(f);
    CHECK(sim_params_load(&q, path, &err) != 0 && strstr(err.msg, "unknown field 'link_widht'"), "typo: %s", err.msg);
    f = fopen(path, "w");
    fprintf(f, "just words\n");
    fclose(f);
    CHECK(sim_params_load(&q, path, &err) != 0 && strstr(err.msg, "expected 'key = value'"), "no '=': %s", err.msg);
    unlink(path);
    CHECK(sim_params_load(&q, "/nonexistent/sim.conf", &err) != 0 && strstr(err.msg, "cannot open"), "%s", err.msg);

    expect_error("link_width", "0", "field 'link_width'");
    expect_error("link_width", "-8", "field 'link_width'");
    expect_error("vc_depth", "0", "outside");
    expect_error("vcs", "33", "field 'vcs'");
    expect_error("flit_size", "8Q", "a size like");
    expect_error("router_stages", "", "expected an integer");
    expect_error("tie", "random", "parity|positive|node");
    expect_error("barrier", "maybe", "on or off");
    expect_error("map_t0", "-1", "non-negative");
    expect_error("max_cycles", "3e9", "outside");
    expect_error("nonsense", "1", "unknown field 'nonsense'");

    int64_t v;
    CHECK(sim_parse_size("32K", &v) == 0 && v == 32768, "32K");
    CHECK(sim_parse_size("4KiB", &v) == 0 && v == 4096, "4KiB");
    CHECK(sim_parse_size("1M", &v) == 0 && v == 1048576, "1M");
    CHECK(sim_parse_size("512", &v) == 0 && v == 512, "512");
    CHECK(sim_parse_size("512B", &v) == 0 && v == 512, "512B");
    CHECK(sim_parse_size("K", &v) != 0 && sim_parse_size("1.5K", &v) != 0, "bad sizes");
    sim_params_default(&p);
    CHECK(sim_msg_flits(&p, 32768) == 4096 && sim_msg_flits(&p, 1) == 1 && sim_msg_flits(&p, 9) == 2, "flit counts");

    uint8_t sel[64];
    CHECK(sim_phase_list_parse("all", 63, sel, &err) == 63, "all");
    CHECK(sim_phase_list_parse("1-3,7,every:30", 63, sel, &err) == 6 && sel[31] && sel[61] && sel[7] && !sel[4],
          "list with every");
    CHECK(sim_phase_list_parse("0-3", 63, sel, &err) < 0 && strstr(err.msg, "field 'phases'"), "%s", err.msg);
    CHECK(sim_phase_list_parse("5-64", 63, sel, &err) < 0, "beyond the last phase");
    CHECK(sim_phase_list_parse("1;2", 63, sel, &err) < 0 && strstr(err.msg, "unexpected"), "%s", err.msg);
    double loads[32];
    CHECK(sim_load_list_parse("0.1:0.5:0.1", loads, 32, &err) == 5 && loads[4] > 0.49, "load range");
    CHECK(sim_load_list_parse("0.2,0.4", loads, 32, &err) == 2 && loads[1] == 0.4, "load list");
    CHECK(sim_load_list_parse("0.2,-1", loads, 32, &err) < 0 && strstr(err.msg, "field 'loads'"), "%s", err.msg);
    return sim_test_finish("test_sim_params");
}
