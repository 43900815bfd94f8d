#include "plan_fit.h"

#include <math.h>
#include <stdlib.h>

#include "plan_model.h"

bool plan_fit_line(const double *x, const double *y, const double *w, int n, double *a, double *b)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double wi = w ? w[i] : 1;
        sw += wi;
        sx += wi * x[i];
        sy += wi * y[i];
        sxx += wi * x[i] * x[i];
        sxy += wi * x[i] * y[i];
    }
    double den = sw * sxx - sx * sx;
    if (n < 2 || fabs(den) <= 1e-12 * fabs(sw * sxx))
        return false;
    *b = (sw * sxy - sx * sy) / den;
    *a = (sy - *b * sx) / sw;
    return true;
}

#define MAX_MOVERS 256

/* Relative error of slopes predicted from (g, bd, bs) against the measured ones. */
static double slope_error(const double *slope, const int *k, int m, double g, double bd, double bs)
{
    double e = 0;
    for (int i = 0; i < m; i++) {
        double bw = bd + bs / k[i];
        double pred = g + (bw > 0 ? 1 / bw : 1e30);
        e += ((pred - slope[i]) / slope[i]) * ((pred - slope[i]) / slope[i]);
    }
    return e;
}

/* Least squares for bd + bs * (1/k) = y, both kept >= 0. */
static void fit_bandwidths(const double *y, const int *k, int m, double *bd, double *bs)
{
    double x[MAX_MOVERS];
    for (int i = 0; i < m; i++)
        x[i] = 1.0 / k[i];
    double a = 0, b = 0;
    if (m < 2 || !plan_fit_line(x, y, NULL, m, &a, &b)) {
        double mean = 0;
        for (int i = 0; i < m; i++)
            mean += y[i] * k[i] / (k[i] + 0.0);
        *bd = mean / m;
        *bs = 0;
        return;
    }
    if (a < 0) { /* all shared: y = bs / k */
        double num = 0, den = 0;
        for (int i = 0; i < m; i++)
            num += y[i] * x[i], den += x[i] * x[i];
        a = 0, b = den > 0 ? num / den : 0;
    } else if (b < 0) { /* all dedicated */
        double mean = 0;
        for (int i = 0; i < m; i++)
            mean += y[i];
        a = mean / m, b = 0;
    }
    *bd = a;
    *bs = b;
}

double plan_fit_lane(const plan_sample *samples, int count, double latency_ns, lane_cost *out)
{
    /* Lines per number of movers. */
    int ks[MAX_MOVERS], m = 0;
    for (int i = 0; i < count; i++) {
        bool seen = false;
        for (int j = 0; j < m; j++)
            seen = seen || ks[j] == samples[i].movers;
        if (!seen && m < MAX_MOVERS)
            ks[m++] = samples[i].movers;
    }
    double slope[MAX_MOVERS], intercept = 0;
    int kmin = m ? ks[0] : 0;
    for (int j = 1; j < m; j++)
        kmin = ks[j] < kmin ? ks[j] : kmin;
    double *x = malloc(sizeof(double) * (size_t)count), *y = malloc(sizeof(double) * (size_t)count);
    double *w = malloc(sizeof(double) * (size_t)count);
    if (!x || !y || !w || m == 0) {
        free(x), free(y), free(w);
        return -1;
    }
    for (int j = 0; j < m; j++) {
        int n = 0;
        for (int i = 0; i < count; i++)
            if (samples[i].movers == ks[j] && samples[i].ns > 0) {
                x[n] = samples[i].bytes, y[n] = samples[i].ns;
                w[n] = 1 / (y[n] * y[n]); /* relative error */
                n++;
            }
        double a, b;
        if (!plan_fit_line(x, y, w, n, &a, &b) || b <= 0) {
            free(x), free(y), free(w);
            return -1;
        }
        slope[j] = b;
        /* The fixed cost is a handoff between two ranks: taken where the
         * fewest move at once, before sharing cores or caches inflates it. */
        if (ks[j] == kmin)
            intercept = a;
    }
    free(x), free(y), free(w);

    /* The per-byte set-up g from a grid; the bandwidths for each g. */
    double smin = slope[0];
    for (int j = 1; j < m; j++)
        smin = fmin(smin, slope[j]);
    double best = INFINITY, best_g = 0, best_bd = 0, best_bs = 0;
    int steps = m > 1 ? 400 : 1; /* one k: g and the bandwidth cannot be told apart */
    for (int s = 0; s < steps; s++) {
        double g = smin * 0.98 * s / steps, inv[MAX_MOVERS], bd, bs;
        for (int j = 0; j < m; j++)
            inv[j] = 1 / (slope[j] - g);
        fit_bandwidths(inv, ks, m, &bd, &bs);
        double e = slope_error(slope, ks, m, g, bd, bs);
        if (e < best)
            best = e, best_g = g, best_bd = bd, best_bs = bs;
    }
    *out = (lane_cost){
        .latency_ns = latency_ns,
        .overhead_ns = fmax(0, intercept - latency_ns),
        .per_byte_ns = best_g,
        .bw_dedicated = best_bd,
        .bw_shared = best_bs,
    };
    /* How well the whole model reproduces every sample. */
    double err = 0;
    for (int i = 0; i < count; i++) {
        double pred = plan_lane_time(out, samples[i].bytes, samples[i].movers);
        double r = (pred - samples[i].ns) / samples[i].ns;
        err += r * r;
    }
    return sqrt(err / count);
}
