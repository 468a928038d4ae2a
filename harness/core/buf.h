/*
 * buf.h - the growable text buffer (markdown, gnuplot scripts, tables, JUnit XML, JSON text).
 *
 * Errors are sticky: after an allocation fails (or the buffer would pass H2B_BUF_MAX) every
 * append is a no-op and h2b_buf_error() returns the code, so a renderer appends freely and
 * checks once at the end. A zeroed struct ({0}) is an empty buffer, as is h2b_buf_init's.
 * Not thread-safe; the caller owns the storage.
 */
#ifndef H2B_CORE_BUF_H
#define H2B_CORE_BUF_H

#include <stddef.h>

#define H2B_BUF_MAX ((size_t)64 << 20) /* 64 MiB: no report comes near it */

struct h2b_buf {
    char *data; /* NUL-terminated after any append; NULL when nothing was appended */
    size_t len;
    size_t cap;
    int err; /* H2B_OK, or the first error: H2B_ERR_NOMEM, H2B_ERR_RANGE or H2B_ERR_INVAL */
};

void h2b_buf_init(struct h2b_buf *b);
void h2b_buf_free(struct h2b_buf *b);

/* Appends n bytes of s / a NUL-terminated string / printf-formatted text. */
void h2b_buf_append(struct h2b_buf *b, const char *s, size_t n);
void h2b_buf_puts(struct h2b_buf *b, const char *s);
void h2b_buf_printf(struct h2b_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends s escaped for XML text and attributes (&, <, >, ", '; control characters become ?). */
void h2b_buf_xml(struct h2b_buf *b, const char *s);

/* The escapers, one per consumer: every string that comes from a results file, a flag or a
 * benchmark's own name goes through the one for where it lands (STYLE.md rule 18).
 *
 * h2b_buf_md: markdown text, also in a table cell (s is never at the start of a line, so
 * headings and lists need no escape). The inline syntax characters \ ` * [ ] < > | ~, and '_'
 * where it is not inside a word, are backslash-escaped and & is &amp;, so no emphasis, link,
 * image, code span, raw HTML or entity can start inside s and no cell can end; line breaks
 * become spaces and other control bytes '?'. */
void h2b_buf_md(struct h2b_buf *b, const char *s);

/* h2b_buf_md_code: s as one complete markdown code span, backticks included, safe in a table
 * cell: the fence is one backtick longer than the longest run of backticks in s (padded with a
 * space when s starts or ends with one), so nothing in s can end it; '|' is "\|" (a GFM table
 * cell takes it as '|', in code spans too), line breaks become spaces and other control bytes
 * '?'. Inside a code span raw HTML is text. */
void h2b_buf_md_code(struct h2b_buf *b, const char *s);

/* h2b_buf_term: s for a terminal: control bytes (C0 and DEL, line breaks and tabs included)
 * become '?', so a name cannot move the cursor, recolour or retitle the terminal, or break a
 * table's line; one byte for one byte, so widths are unchanged. */
void h2b_buf_term(struct h2b_buf *b, const char *s);

/* h2b_buf_mermaid: s as one double-quoted Mermaid string (a chart title or an axis label of an
 * xychart-beta block in a markdown ```mermaid fence), at most max bytes of s (cut on a UTF-8
 * character boundary, "..." added). Mermaid's lexer takes everything up to the next '"', and
 * the renderer reads entities (#quot;, &lt;) and HTML: so '"' and '`' become '\'', '[' '{' '('
 * and ']' '}' ')' stay brackets as '(' and ')', and < > # & ; \ and every control byte (line
 * breaks included: one would end the statement) become '?'; other bytes, UTF-8 included, pass.
 * Nothing in s can end the string, the statement or the fence, or start markup. */
void h2b_buf_mermaid(struct h2b_buf *b, const char *s, size_t max);

/* Appends n spaces (text table padding). */
void h2b_buf_pad(struct h2b_buf *b, size_t n);

/* A text table's column width: the larger of w and strlen(s) (s NULL counts as empty). */
size_t h2b_buf_width(size_t w, const char *s);

/* The text so far ("" when empty; never NULL). Valid until the next append or free. */
const char *h2b_buf_str(const struct h2b_buf *b);

/* H2B_OK or the first error an append hit. */
int h2b_buf_error(const struct h2b_buf *b);

/* Hands the text to the caller (malloc'd, caller frees; "" for an empty buffer) and empties b.
 * Returns NULL after an error (b is then freed) or when allocation fails. */
char *h2b_buf_take(struct h2b_buf *b);

/* The same with a code: H2B_OK with *out set, or the buffer's error (H2B_ERR_NOMEM when the
 * final allocation fails); b is empty afterwards either way. */
int h2b_buf_finish(struct h2b_buf *b, char **out);

#endif
