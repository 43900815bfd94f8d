/* plan_fit: fits a lane's cost figures to measured transfer times.
 *
 * For each number of movers k the samples are fitted by least squares to a
 * line t = a + s * bytes, in relative terms (times span decades, and the
 * small ones matter as much as the large); then the slopes, s_k = g + 1 / (bw_dedicated +
 * bw_shared / k), give the per-byte set-up g and the two bandwidths (a grid
 * over g, least squares for the bandwidths, both kept non-negative); the
 * intercept at the smallest k gives the fixed cost. With a
 * single k the shared part cannot be told from the dedicated one and is 0. */
#ifndef SHOAL_PLAN_FIT_H
#define SHOAL_PLAN_FIT_H

#include "lane.h"

typedef struct plan_sample {
    double bytes;
    int movers; /* processes of the node moving data at once */
    double ns;  /* measured time of one transfer */
} plan_sample;

/* Fits out from the samples; latency_ns is measured apart (a zero-byte
 * transfer), the rest of the intercept is the per-call overhead. Returns the
 * relative rms error of the fitted model over the samples, or -1 when the
 * samples cannot be fitted (fewer than two sizes for some k). */
double plan_fit_lane(const plan_sample *samples, int count, double latency_ns, lane_cost *out);

/* Least squares line y = a + b x over n points, each weighted by w (NULL:
 * all 1); false when x is constant. */
bool plan_fit_line(const double *x, const double *y, const double *w, int n, double *a, double *b);

#endif
