# embed-runner.py: turns fxwb_torch_runner.py into a C array, so an installed fxwb runs without the source tree; puts
# the allowlist (fx-torch-allow.def and the ops of the engine's ops.def) into the script where it says so.
#     python3 embed-runner.py fxwb_torch_runner.py fx-torch-allow.def ops.def OUT.c
import json
import re
import sys

src, allow_def, ops_def, dst = sys.argv[1:5]
MARKER = "_ALLOW = None  # @FXWB_ALLOWLIST@"


def strip_comments(text):
    # The C preprocessor drops comments before it sees the macros: so must we.
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


with open(allow_def, encoding="utf-8") as f:
    allow_text = strip_comments(f.read())
allow = {"namespaces": [], "functions": [], "operators": [], "methods": [], "constants": []}
kinds = {"OP_NAMESPACE": "namespaces", "FUNCTION": "functions", "OPERATOR": "operators", "METHOD": "methods",
         "CONSTANT": "constants"}
for m in re.finditer(r"^\s*FX_TORCH_ALLOW_(\w+)\s*\(\s*\"([^\"\\]*)\"\s*\)\s*$", allow_text, re.M):
    if m.group(1) not in kinds:
        sys.exit("%s: unknown entry kind FX_TORCH_ALLOW_%s" % (allow_def, m.group(1)))
    allow[kinds[m.group(1)]].append(m.group(2))
leftover = re.sub(r"^\s*FX_TORCH_ALLOW_\w+\s*\(\s*\"[^\"\\]*\"\s*\)\s*$", "", allow_text, flags=re.M)
if leftover.strip():
    sys.exit("%s: lines this script does not understand: %r" % (allow_def, leftover.strip()[:200]))

with open(ops_def, encoding="utf-8") as f:
    ops_text = strip_comments(f.read())
allow["ops"] = re.findall(r"^\s*FX_OP\s*\(\s*\w+\s*,\s*\"([^\"\\]+)\"", ops_text, re.M)
if len(allow["ops"]) < 10:
    sys.exit("%s: found only %d ops" % (ops_def, len(allow["ops"])))

with open(src, encoding="utf-8") as f:
    script = f.read()
if script.count(MARKER) != 1:
    sys.exit("%s: the line %r must appear exactly once" % (src, MARKER))
script = script.replace(MARKER, "_ALLOW = " + json.dumps(allow, sort_keys=True) + "  # from fx-torch-allow.def, ops.def")
data = script.encode("utf-8")

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
