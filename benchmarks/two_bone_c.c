/* The two-bone algorithm of limbik.two_bone (pole mode, "extend" policy) as a plain C loop.
 *
 * Built by benchmarks/two_bone.py with
 *   gcc -O3 -march=native -ffast-math -shared -fPIC
 * and called through ctypes, so limbik's compiled kernel can be compared with it.
 * Inputs are contiguous (n, 3) and (n,) float64 arrays; outputs (n, 3, 3), (n,), (n,).
 * It does what limbik's kernel does for one limb (solve_element in pole mode, "extend"):
 * the same scale-safe norms, the same Heron form of the sine, the same pole rescaling and
 * the same fall-backs, so both loops do the same work; it skips only limbik's fused
 * check of its inputs (a C caller would not validate them).
 */
#include <math.h>
#include <stdint.h>

#define AT_ROOT_RTOL 1e-15
#define POLE_MIN_SINE 1e-9
/* Outside these magnitudes a norm is taken in rescaled units (exact powers of two). */
#define NORM_LOW 0x1p-500
#define NORM_HIGH 0x1p500
#define UP 0x1p600
#define DOWN 0x1p-600

static inline double norm3(double x, double y, double z) {
    const double big = fmax(fabs(x), fmax(fabs(y), fabs(z)));
    if (big > NORM_HIGH || big < NORM_LOW) {
        const double k = big > NORM_HIGH ? DOWN : UP;
        x *= k; y *= k; z *= k;
        return sqrt(x * x + y * y + z * z) / k;
    }
    return sqrt(x * x + y * y + z * z);
}

static inline void rolled_bend(double x, double y, double z, double *nx, double *ny,
                               double *nz) {
    double s;
    if (z > 0.0) {
        double r2 = x * x + y * y;
        if (r2 <= 1e-24) {
            *nx = 0.0; *ny = 1.0; *nz = 0.0;
            return;
        }
        s = (1.0 + z) / r2;
    } else {
        s = 1.0 / (1.0 - z);
    }
    *nx = x * y * s;
    *ny = y * y * s - 1.0;
    *nz = -y;
}

void two_bone_pole(int64_t n, const double *root, const double *target, const double *pole,
                   const double *upper, const double *lower, double reach_rtol,
                   double *positions, double *error, uint8_t *reached) {
    for (int64_t i = 0; i < n; ++i) {
        const double rx = root[3 * i], ry = root[3 * i + 1], rz = root[3 * i + 2];
        const double dx = target[3 * i] - rx, dy = target[3 * i + 1] - ry,
                     dz = target[3 * i + 2] - rz;
        const double l1 = upper[i], l2 = lower[i];
        const double reach = l1 + l2, fold = fabs(l1 - l2);
        const double dist = norm3(dx, dy, dz);
        double ux, uy, uz;
        const int aimed = dist > AT_ROOT_RTOL * reach;
        if (aimed) {
            const double inv = 1.0 / dist;
            ux = dx * inv; uy = dy * inv; uz = dz * inv;
        } else {
            ux = 0.0; uy = 0.0; uz = -1.0;
        }
        const double dc = fmin(fmax(dist, fold), reach);
        double cos_a, sin_a;
        if (dc > NORM_LOW * reach) {
            const double inv = 1.0 / (2.0 * l1 * dc);
            cos_a = fmin(fmax(((l1 - l2) * (l1 + l2) + dc * dc) * inv, -1.0), 1.0);
            sin_a = fmin(sqrt((reach + dc) * (reach - dc))
                         * (sqrt(dc + fold) * sqrt(dc - fold)) * inv, 1.0);
        } else {
            cos_a = 0.0; sin_a = 1.0;
        }
        double px = pole[3 * i] - rx, py = pole[3 * i + 1] - ry, pz = pole[3 * i + 2] - rz;
        const double big = fmax(fabs(px), fmax(fabs(py), fabs(pz)));
        if (big > NORM_HIGH || big < NORM_LOW) {
            const double k = big > NORM_HIGH ? DOWN : UP;
            px *= k; py *= k; pz *= k;
        }
        double t = px * ux + py * uy + pz * uz;
        double nx = px - t * ux, ny = py - t * uy, nz = pz - t * uz;
        const double pn2 = nx * nx + ny * ny + nz * nz;
        const double p2 = px * px + py * py + pz * pz;
        if (pn2 > (POLE_MIN_SINE * POLE_MIN_SINE) * p2 && pn2 > 0.0) {
            t = nx * ux + ny * uy + nz * uz;
            nx -= t * ux; ny -= t * uy; nz -= t * uz;
            const double inv = 1.0 / sqrt(nx * nx + ny * ny + nz * nz);
            nx *= inv; ny *= inv; nz *= inv;
        } else {
            rolled_bend(ux, uy, uz, &nx, &ny, &nz);
        }
        const double a = l1 * cos_a, b = l1 * sin_a;
        double *out = positions + 9 * i;
        out[0] = rx; out[1] = ry; out[2] = rz;
        out[3] = rx + a * ux + b * nx;
        out[4] = ry + a * uy + b * ny;
        out[5] = rz + a * uz + b * nz;
        out[6] = rx + dc * ux;
        out[7] = ry + dc * uy;
        out[8] = rz + dc * uz;
        const double err = aimed ? fabs(dist - dc)
                                 : norm3(dx - dc * ux, dy - dc * uy, dz - dc * uz);
        error[i] = err;
        reached[i] = err <= reach_rtol * reach;
    }
}
