/* The gpu-resident entry points of a flow_channel built without CUDA (TRIDI_ENABLE_CUDA=OFF): creating
 * the resident model reports 77 ("no GPU"), the same answer as a CUDA build on a machine without a GPU,
 * so the backend is refused with a message and GPU tests skip. The other entry points are never
 * reached, since no resident model can exist; they report failure all the same. */
#include <stdio.h>

struct fc_gpu;

int fc_gpu_create(struct fc_gpu **out, int im, int jm, int km, double dt, void *par, int jlo, int jhi,
                  int node_rank, char *msg, int msglen) {
    (void)im; (void)jm; (void)km; (void)dt; (void)par; (void)jlo; (void)jhi; (void)node_rank;
    *out = NULL;
    if (msg && msglen > 0) snprintf(msg, (size_t)msglen, "this flow_channel was built without CUDA");
    return 77;
}
int fc_gpu_put(struct fc_gpu *g, const double *eta, const double *u, const double *v, const double *t,
               const double *s) {
    (void)g; (void)eta; (void)u; (void)v; (void)t; (void)s;
    return 1;
}
int fc_gpu_get(struct fc_gpu *g, double *eta, double *u, double *v, double *t, double *s) {
    (void)g; (void)eta; (void)u; (void)v; (void)t; (void)s;
    return 1;
}
int fc_gpu_step(struct fc_gpu *g, double q, double *outflow_volume, double *heat_out, double *salt_out,
                double *solver_ms, char *msg, int msglen) {
    (void)g; (void)q; (void)outflow_volume; (void)heat_out; (void)salt_out; (void)solver_ms;
    if (msg && msglen > 0) snprintf(msg, (size_t)msglen, "this flow_channel was built without CUDA");
    return 1;
}
void fc_gpu_destroy(struct fc_gpu *g) { (void)g; }
