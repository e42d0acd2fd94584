# embed-runner.py: turns fxwb_torch_runner.py into a C array, so an installed fxwb runs without the source tree.
import sys

src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    data = f.read()
lines = ["/* Generated from fxwb_torch_runner.py by embed-runner.py: do not edit. */",
         "#include <stddef.h>",
         "",
         "extern const unsigned char fx_torch_runner_script[];",
         "extern const size_t fx_torch_runner_script_len;",
         "",
         "const unsigned char fx_torch_runner_script[] = {"]
for i in range(0, len(data), 16):
    lines.append("  " + ", ".join("0x%02x" % b for b in data[i:i + 16]) + ",")
lines.append("  0x00")
lines.append("};")
lines.append("const size_t fx_torch_runner_script_len = %d;" % len(data))
with open(dst, "w") as f:
    f.write("\n".join(lines) + "\n")
