/* The halo transports this build has: the only place where the build's options (CUDA, NCCL) decide
 * which transports exist; halo.c calls them only through this table. */
#include "halo_internal.h"

#include <stdio.h>

#ifdef TRIDI_HAVE_NCCL
/* The NCCL transport lives in libtridi_nccl (decision 043), so a program that never uses it never loads
 * libnccl. This library refers to it weakly: a static program has it when it links tridi::nccl (whose
 * --undefined=tridi_halo_nccl takes it from the archive); a shared libtridi_mpi loads the shared
 * libtridi_nccl from its own directory (RUNPATH $ORIGIN) the first time a halo plan considers NCCL.
 * Without it the transport is unusable: AUTO passes over it; asked for by name it fails, saying why. */
#pragma weak tridi_halo_nccl

#ifdef TRIDI_NCCL_SONAME
#include <dlfcn.h>
#include <pthread.h>
static const tridi_halo_transport *nccl_loaded;
static char nccl_load_error[160];
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static void nccl_load(void)
{
    void *lib = dlopen(TRIDI_NCCL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib)
        nccl_loaded = (const tridi_halo_transport *)dlsym(lib, "tridi_halo_nccl");
    if (!nccl_loaded) {
        const char *e = dlerror();
        snprintf(nccl_load_error, sizeof nccl_load_error, "%s", e ? e : TRIDI_NCCL_SONAME " has no tridi_halo_nccl");
    }
}
#endif

/* The transport itself, or NULL (why: into why when not NULL). */
static const tridi_halo_transport *nccl_impl(char *why, size_t why_len)
{
    if (&tridi_halo_nccl)
        return &tridi_halo_nccl;
#ifdef TRIDI_NCCL_SONAME
    pthread_once(&nccl_once, nccl_load);
    if (nccl_loaded)
        return nccl_loaded;
    if (why)
        snprintf(why, why_len, "libtridi_nccl could not be loaded (%s)", nccl_load_error);
#else
    if (why)
        snprintf(why, why_len, "libtridi_nccl is not linked into this program (link tridi::nccl, or "
                               "`pkg-config --libs tridi_nccl`)");
#endif
    return NULL;
}

static tridi_status nccl_probe(const char *f, tridi_halo h, int *usable, char *why, size_t why_len)
{
    const tridi_halo_transport *t = nccl_impl(why, why_len);
    if (!t) {
        *usable = 0;
        return TRIDI_SUCCESS;
    }
    return t->probe ? t->probe(f, h, usable, why, why_len) : TRIDI_SUCCESS;
}
/* Called only once probe found the transport on every rank. */
static tridi_status nccl_attach(const char *f, tridi_halo h)
{
    const tridi_halo_transport *t = nccl_impl(NULL, 0);
    return t->attach ? t->attach(f, h) : TRIDI_SUCCESS;
}
static tridi_status nccl_create(const char *f, tridi_halo h)
{
    const tridi_halo_transport *t = nccl_impl(NULL, 0);
    return t->create ? t->create(f, h) : TRIDI_SUCCESS;
}
static tridi_status nccl_begin(const char *f, tridi_halo h) { return nccl_impl(NULL, 0)->begin(f, h); }
static tridi_status nccl_end(const char *f, tridi_halo h) { return nccl_impl(NULL, 0)->end(f, h); }
static void nccl_destroy(tridi_halo h)
{
    const tridi_halo_transport *t = nccl_impl(NULL, 0);
    if (t && t->destroy)
        t->destroy(h);
}
static const tridi_halo_transport nccl_linked = {
    .probe = nccl_probe,
    .attach = nccl_attach,
    .create = nccl_create,
    .begin = nccl_begin,
    .end = nccl_end,
    .destroy = nccl_destroy,
};
#endif

#if defined(TRIDI_HAVE_CUDA) && !defined(TRIDI_HAVE_NCCL)
/* Asked for by name in a build without NCCL: the same build on every rank, so each fails alike. */
static const tridi_halo_transport nccl_unbuilt = {
    .unbuilt = "tridi was built without NCCL (nccl.h and libnccl were not found, or TRIDI_ENABLE_NCCL=OFF)",
};
#endif

const tridi_halo_table tridi_halo_transports = {
    .host = &tridi_halo_host,
#ifdef TRIDI_HAVE_CUDA
    .device_of = tridi_halo_device_of,
    .use_device = tridi_halo_use_device,
    .device =
        {
            [TRIDI_TRANSPORT_IPC] = &tridi_halo_ipc,
            [TRIDI_TRANSPORT_CUDA_AWARE] = &tridi_halo_cuda_aware,
            [TRIDI_TRANSPORT_STAGED] = &tridi_halo_staged,
#ifdef TRIDI_HAVE_NCCL
            [TRIDI_TRANSPORT_NCCL] = &nccl_linked,
#else
            [TRIDI_TRANSPORT_NCCL] = &nccl_unbuilt,
#endif
        },
#endif
    /* IPC when every rank can use it; NCCL only where IPC cannot serve (ranks on several nodes, GPUs
     * without peer access, arrays CUDA IPC cannot export), falling back to MPI when NCCL cannot be set up
     * on some rank (ranks sharing a GPU, ...); then CUDA-aware MPI, else host staging. */
    .auto_order = {TRIDI_TRANSPORT_IPC, TRIDI_TRANSPORT_NCCL, TRIDI_TRANSPORT_CUDA_AWARE, TRIDI_TRANSPORT_STAGED},
};
