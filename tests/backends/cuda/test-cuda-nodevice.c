/* test-cuda-nodevice.c: without a CUDA driver every entry point fails cleanly with FX_ERR_NO_DEVICE and says why;
   the parts that need no device (size classes, NVRTC's own availability) keep working. Runs on every machine: the
   driver library is pointed at a path that does not exist, so a GPU host takes the same path. */
#include "cuda-test.h"
#include "cuda/fx-cuda.h"

static void
test_probe (void)
{
  fx_cuda_runtime_info info;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK (fx_cuda_probe (&info, &diag) == FX_ERR_NO_DEVICE, "probe did not report no device");
  CHECK (diag.code == FX_ERR_NO_DEVICE, "diag code %d", diag.code);
  CHECK (strncmp (diag.message, "no CUDA device: ", 16) == 0, "message: %s", diag.message);
  /* The reason names the library that is missing. */
  CHECK (strstr (diag.message, "FX_CUDA_DRIVER_LIBRARY") != NULL, "message: %s", diag.message);
  CHECK (strstr (diag.message, "/nonexistent/libcuda.so.1") != NULL, "message: %s", diag.message);
  CHECK (!info.have_driver && info.device_count == 0, "info claims a driver");
  CHECK (info.driver_error[0] != '\0', "no driver_error");
  printf ("# probe: %s\n", diag.message);
  printf ("# nvrtc: %s %d.%d %s\n", info.have_nvrtc ? "found" : "absent", info.nvrtc_major, info.nvrtc_minor,
          info.have_nvrtc ? info.nvrtc_path : info.nvrtc_error);
  printf ("# cublas: %s %s\n", info.have_cublas ? "found" : "absent",
          info.have_cublas ? info.cublas_path : info.cublas_error);
  printf ("# cublasLt: %s %s\n", info.have_cublaslt ? "found" : "absent",
          info.have_cublaslt ? info.cublaslt_path : info.cublaslt_error);
  /* cuBLASLt loads without a device where it is installed (every entry point resolved), else says why */
  CHECK (info.have_cublaslt ? info.cublaslt_path[0] != '\0' : info.cublaslt_error[0] != '\0', "cuBLASLt report");
  CHECK (!info.have_cublaslt || strstr (info.cublaslt_path, "libcublasLt") != NULL, "path %s", info.cublaslt_path);
}

/* reduce-overhead's static outputs: fresh after the replay that made them, stale after the next one, with
   PyTorch's words, and stale for good once their graph is freed (no device needed: nothing is read) */
static void
test_static_outputs (void)
{
  static const char overwritten[] = "Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
                                    "subsequent run.";
  fx_cuda_generation *gen = fx_cuda_generation_new ();
  int64_t sizes[2] = { 4, 8 };
  fx_tensor *t = NULL, *t2 = NULL, *view;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK (gen != NULL, "no generation");
  CHECK (fx_cuda_generation_bump (gen) == 1, "first replay");
  CHECK_OK (fx_cuda_tensor_new_static (NULL, 0x10000, 128, gen, FX_DTYPE_F32, 2, sizes, NULL, &t, &diag), &diag);
  CHECK (t->device.type == FX_DEVICE_CUDA && fx_cuda_tensor_is_static (t), "not a static cuda tensor");
  CHECK (fx_cuda_tensor_ptr (t) == 0x10000, "ptr");
  CHECK (t->strides[0] == 8 && t->strides[1] == 1, "strides");
  CHECK (fx_cuda_tensor_check_live (t, &diag) == FX_OK, "fresh output refused: %s", diag.message);
  view = fx_tensor_as_strided (t, 1, sizes, &sizes[1], 8);
  CHECK (fx_cuda_tensor_is_static (view) && fx_cuda_tensor_check_live (view, NULL) == FX_OK, "view");
  /* the next replay overwrites it; its own outputs are fresh */
  fx_cuda_generation_bump (gen);
  CHECK_OK (fx_cuda_tensor_new_static (NULL, 0x10000, 128, gen, FX_DTYPE_F32, 2, sizes, NULL, &t2, &diag), &diag);
  CHECK (fx_cuda_tensor_check_live (t2, &diag) == FX_OK, "new output refused: %s", diag.message);
  CHECK (fx_cuda_tensor_check_live (t, &diag) == FX_ERR_INVALID, "stale output accepted");
  CHECK (strncmp (diag.message, overwritten, sizeof overwritten - 1) == 0, "message: %s", diag.message);
  CHECK (fx_cuda_tensor_check_live (view, &diag) == FX_ERR_INVALID, "stale view accepted");
  /* other tensors are never refused */
  {
    fx_tensor *h = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sizes);
    CHECK (fx_cuda_tensor_check_live (h, &diag) == FX_OK && !fx_cuda_tensor_is_static (h), "host tensor");
    fx_tensor_unref (h);
  }
  /* the graph goes: every output of it is stale, and the tensors keep the generation alive */
  fx_cuda_generation_retire (gen);
  fx_cuda_generation_unref (gen);
  CHECK (fx_cuda_tensor_check_live (t2, &diag) == FX_ERR_INVALID, "output of a freed graph accepted");
  CHECK (strstr (diag.message, "freed") != NULL, "message: %s", diag.message);
  fx_tensor *none = (fx_tensor *) 0x1;
  CHECK (fx_cuda_tensor_new_static (NULL, 0, 128, NULL, FX_DTYPE_F32, 2, sizes, NULL, &none, &diag)
         == FX_ERR_INVALID && none == NULL, "static tensor without memory");
  fx_tensor_unref (t);
  fx_tensor_unref (view);
  fx_tensor_unref (t2);
}

static void
test_open (void)
{
  fx_cuda *cuda = (fx_cuda *) 0x1;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK (fx_cuda_open (0, &cuda, &diag) == FX_ERR_NO_DEVICE, "open succeeded");
  CHECK (cuda == NULL, "open left a handle");
  CHECK (strncmp (diag.message, "no CUDA device", 14) == 0, "message: %s", diag.message);
  /* NULL diag is allowed everywhere. */
  CHECK (fx_cuda_open (3, &cuda, NULL) == FX_ERR_NO_DEVICE, "open without diag");
  /* Closing NULL is harmless. */
  fx_cuda_close (NULL);
}

static void
test_status_name (void)
{
  CHECK (strcmp (fx_status_name (FX_ERR_NO_DEVICE), "") != 0, "no name for FX_ERR_NO_DEVICE");
}

static void
test_size_classes (void)
{
  CHECK (fx_cuda_alloc_round (0) == 512, "0 -> %zu", fx_cuda_alloc_round (0));
  CHECK (fx_cuda_alloc_round (1) == 512, "1 -> %zu", fx_cuda_alloc_round (1));
  CHECK (fx_cuda_alloc_round (512) == 512, "512 -> %zu", fx_cuda_alloc_round (512));
  CHECK (fx_cuda_alloc_round (513) == 1024, "513 -> %zu", fx_cuda_alloc_round (513));
  CHECK (fx_cuda_alloc_round ((1 << 20) - 1) == (1 << 20), "1MiB-1 -> %zu", fx_cuda_alloc_round ((1 << 20) - 1));
  CHECK (fx_cuda_alloc_round (1 << 20) == (2 << 20), "1MiB -> %zu", fx_cuda_alloc_round (1 << 20));
  CHECK (fx_cuda_alloc_round ((2 << 20) + 1) == (4 << 20), "2MiB+1 -> %zu", fx_cuda_alloc_round ((2 << 20) + 1));
  for (size_t n = 1; n < ((size_t) 64 << 20); n = n * 3 + 7)
    {
      size_t r = fx_cuda_alloc_round (n);
      CHECK (r >= n && r % 512 == 0, "%zu -> %zu", n, r);
      CHECK (r - n < (n < (1 << 20) ? 512u : (2u << 20)), "%zu -> %zu wastes too much", n, r);
    }
}

static void
test_arch_name (void)
{
  char arch[16];
  fx_cuda_arch_name (9, 0, arch, sizeof arch);
  CHECK (strcmp (arch, "sm_90") == 0, "%s", arch);
  fx_cuda_arch_name (12, 0, arch, sizeof arch);
  CHECK (strcmp (arch, "sm_120") == 0, "%s", arch);
}

int
main (void)
{
  setenv ("FX_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  cuda_test_run ("/cuda/nodevice/probe", test_probe);
  cuda_test_run ("/cuda/nodevice/open", test_open);
  cuda_test_run ("/cuda/nodevice/status-name", test_status_name);
  cuda_test_run ("/cuda/nodevice/size-classes", test_size_classes);
  cuda_test_run ("/cuda/nodevice/arch-name", test_arch_name);
  cuda_test_run ("/cuda/nodevice/static-outputs", test_static_outputs);
  return cuda_test_finish ();
}
