#!/usr/bin/env python3
# check-report.py: validates what fxwb report writes, for the report tests.
#   check-report.py html DIR     every page parses with html.parser, its tags balance, scripts are only the report's
#                                own files, every link stays inside the folder and names a file that exists, no
#                                event-handler attribute; prints each page's decoded text ("== NAME" then the text)
#   check-report.py json FILE SCHEMA   the document satisfies the schema (the JSON Schema subset it uses)
# Exit 0 when valid, 1 with a located message otherwise.
import html.parser
import json
import os
import re
import sys

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SCRIPTS = {"report.js", "search-index.js"}


class Page(html.parser.HTMLParser):
    def __init__(self, name, folder):
        super().__init__(convert_charrefs=True)
        self.name, self.folder = name, folder
        self.stack, self.text, self.errors = [], [], []
        self.in_script = False

    def where(self):
        line, col = self.getpos()
        return f"{self.name}:{line}:{col + 1}"

    def check_link(self, url):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url) or url.startswith("//"):
            self.errors.append(f"{self.where()}: link leaves the report: {url!r}")
            return
        path = url.split("#", 1)[0].split("?", 1)[0]
        if path and not os.path.exists(os.path.join(self.folder, path)):
            self.errors.append(f"{self.where()}: link to a missing file: {url!r}")

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in a:
            if k.startswith("on"):
                self.errors.append(f"{self.where()}: event handler attribute {k}")
        if tag == "script":
            src = (a.get("src") or "").split("?", 1)[0]
            if src not in SCRIPTS:
                self.errors.append(f"{self.where()}: a script that is not the report's own: {a!r}")
            self.in_script = True
        for k in ("href", "src"):
            if a.get(k) is not None:
                self.check_link(a[k])
        if tag not in VOID:
            self.stack.append((tag, self.where()))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False
        if not self.stack or self.stack[-1][0] != tag:
            open_ = self.stack[-1] if self.stack else ("nothing", "")
            self.errors.append(f"{self.where()}: </{tag}> closes <{open_[0]}> opened at {open_[1]}")
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.in_script and data.strip():
            self.errors.append(f"{self.where()}: inline script text")
        self.text.append(data)


def check_html(folder):
    errors, out = [], []
    names = sorted(n for n in os.listdir(folder) if n.endswith(".html"))
    if "index.html" not in names:
        errors.append(f"{folder}: no index.html")
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8", errors="strict") as f:
            src = f.read()
        if not src.startswith("<!DOCTYPE html>"):
            errors.append(f"{name}:1:1: no doctype")
        p = Page(name, folder)
        p.feed(src)
        p.close()
        errors += p.errors
        for tag, where in p.stack:
            errors.append(f"{where}: <{tag}> never closed")
        out.append(f"== {name}\n" + "".join(p.text))
    js = os.path.join(folder, "search-index.js")
    with open(js, encoding="utf-8") as f:
        text = f.read()
    m = re.match(r"^//[^\n]*\nwindow\.FXWB_SEARCH = (\[.*\]);\n$", text, re.S)
    if not m:
        errors.append(f"{js}: not 'window.FXWB_SEARCH = [...];'")
    else:
        if "<" in m.group(1):
            errors.append(f"{js}: a raw '<' in the search index")
        entries = json.loads(m.group(1))
        if len(entries) != len([n for n in names if n.startswith("compile-")]):
            errors.append(f"{js}: {len(entries)} entries for {len(names) - 1} compile pages")
        out.append("== search-index.js\n" + " ".join(e["id"] + " " + e["title"] + " " + e["text"] for e in entries))
    return errors, "\n".join(out)


def type_ok(value, t):
    if isinstance(t, list):
        return any(type_ok(value, x) for x in t)
    return {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }[t](value)


def validate(value, schema, path, errors):
    if len(errors) > 20:
        return
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if "type" in schema and not type_ok(value, schema["type"]):
        errors.append(f"{path}: {type(value).__name__} is not {schema['type']}")
        return
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing '{key}'")
        props = schema.get("properties", {})
        for key, v in value.items():
            if key in props:
                validate(v, props[key], f"{path}.{key}", errors)
            elif isinstance(schema.get("additionalProperties"), dict):
                validate(v, schema["additionalProperties"], f"{path}.{key}", errors)
            elif props:
                errors.append(f"{path}: '{key}' is not in the schema")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            validate(v, schema["items"], f"{path}[{i}]", errors)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "html":
        errors, text = check_html(sys.argv[2])
        sys.stdout.write(text)
    elif len(sys.argv) == 4 and sys.argv[1] == "json":
        with open(sys.argv[2], encoding="utf-8") as f:
            doc = json.load(f)
        with open(sys.argv[3], encoding="utf-8") as f:
            schema = json.load(f)
        errors = []
        validate(doc, schema, "$", errors)
    else:
        sys.stderr.write(__doc__ if __doc__ else "usage: check-report.py html DIR | json FILE SCHEMA\n")
        return 2
    for e in errors[:30]:
        sys.stderr.write(e + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
