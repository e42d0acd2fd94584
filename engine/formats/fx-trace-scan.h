/* fx-trace-scan.h: a strict, allocation-free reading of the small JSON a TORCH_TRACE import meets on every record
   (the envelope dict, a chromium event's top-level keys), so the hot path needs no json-c objects. It answers only
   when sure: anything outside strict JSON, an escape in a string it must return, a repeated key, deep nesting or
   trailing text makes it say no, and the caller asks json-c as before. Where it says yes, json-c reads the same
   values (tests/engine/formats/trace/test-trace-scan.c checks every fixture line). Private to engine/formats.
   fx_json_scan_members also reads a whole object's members (compilation_metrics: about a hundred). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "fx/common.h"

typedef struct fx_json_span
{
  const char *p;
  size_t len;
} fx_json_span;

/* One wanted member of an object. type: 0 absent, 's' a string without escapes (value: its characters, no quotes),
   'i' an integer, 'd' another number, 'n' null, 't' true, 'f' false, '{' an object, '[' an array (value: its
   JSON text). */
typedef struct fx_json_field
{
  const char *key;
  char type;
  fx_json_span value;
} fx_json_field;

/* The object at p (leading whitespace allowed) up to end, validated whole: fills the n wanted fields, *obj_end just
   after its closing brace. False when unsure (see above; also a wanted string value with an escape). */
bool fx_json_scan_fields (const char *p, const char *end, fx_json_field *fields, size_t n, const char **obj_end);

/* A member of an object read by fx_json_scan_members: type and value as fx_json_field's, except that a string with
   escapes (escaped) is also given, its value the text between its quotes, escapes and all (fx_json_unescape). */
typedef struct fx_json_member
{
  fx_json_span key;
  char type;
  bool escaped;
  fx_json_span value;
} fx_json_member;

/* Every member of the object at p (leading whitespace allowed) up to end, in order, at most cap of them, validated
   whole: false when unsure (as fx_json_scan_fields), when a key has an escape or comes twice, or past cap. */
bool fx_json_scan_members (const char *p, const char *end, fx_json_member *out, size_t cap, size_t *n,
                           const char **obj_end);

/* The characters of a string the scanner took (between its quotes), escapes decoded into UTF-8 as json-c decodes
   them (the scanner leaves surrogates to json-c), appended to out. */
void fx_json_unescape (fx_json_span s, fx_buf *out);

/* The elements of the array at p (leading whitespace allowed), at most cap, as fx_json_scan_members gives members
   (keys empty). False when unsure or past cap. */
bool fx_json_scan_array (const char *p, const char *end, fx_json_member *items, size_t cap, size_t *n);

/* The value (whitespace around it allowed) as json-c writes what it reads with JSON_C_TO_STRING_PLAIN, appended to
   out. False when unsure (out unchanged): the scanner's refusals, integers past 18 digits, a repeated key. */
bool fx_json_write_plain (fx_json_span value, fx_buf *out);

/* What the importer reads of an envelope: the first key that is not a context key (the record kind) and its value,
   the compile id as the importer's json_int() reads it (-1, or 0 for attempt, when absent, not an integer or out of
   0..1000000000), and has_payload when it is a string. */
typedef struct fx_trace_envelope
{
  fx_json_span kind;
  fx_json_span meta;
  char meta_type;
  int compiled_autograd_id, frame_id, frame_compile_id, attempt;
  bool has_want;
  fx_json_span want;
} fx_trace_envelope;

/* Reads an envelope object js..end; only spaces and JSON whitespace may follow it. False when unsure, or when the
   object has no kind (json-c's reading then reports what is wrong). */
bool fx_trace_scan_envelope (const char *js, const char *end, fx_trace_envelope *env);

/* The reserved context keys of an envelope (rank, frame_id, has_payload, ...): the record kind is the first other
   key. */
bool fx_trace_is_context_key (const char *key, size_t len);

/* An integer field's value as the importer's json_int() gives it: dflt unless 0..1000000000. */
int fx_json_field_int (const fx_json_field *f, int dflt);
