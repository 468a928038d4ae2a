/*
 * flame.c - flame graphs (and differential flame graphs) as self-contained SVG.
 *
 * Approach: the stacks are merged into a call tree (children sorted by name, as FlameGraph
 * does, so the same profile always draws the same picture); each node is a rectangle whose width
 * is its sample count times (plot width / samples), roots at the bottom under an "all" frame.
 * Colour says the DSO class (kernel orange, nghttp2 blue, TLS purple, libc green, own code
 * yellow, other grey; the shade varies by name so neighbours stay apart). A differential graph
 * draws b's tree and colours every frame by the change of its share from a to b: red where b
 * spends a larger share, blue where smaller, white where equal; frames only in a are not drawn
 * (their share shows as the blue of their callers).
 *
 * The file is a static picture first (labels are <text> clipped to their frame, a legend, every
 * frame's <title>), so a markdown viewer's <img> shows it; in a browser the embedded script adds
 * hover details, click to zoom (click the background or "Reset zoom" to go back) and a search
 * that highlights matching frames. Every string from a profile reaches the XML only through
 * h2b_buf_xml(), the project's one XML escaper.
 *
 * Rejected: the FlameGraph Perl script (not packaged by Debian, and a second copy of the
 * format); an HTML page (the report's markdown needs an image it can embed); drawing frames
 * narrower than 0.1 px below the first level (thousands of invisible rectangles; their samples
 * still count in their parents' widths).
 */
#include "prof/prof_int.h"

#include "core/array.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/fs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMG_W 1200.0
#define PAD_X 10.0
#define PLOT_W (IMG_W - 2 * PAD_X)
#define FRAME_H 16
#define TOP_H 56
#define BOTTOM_H 44
#define CHAR_W 7.0 /* width of one character of the 12 px monospace label */
#define MIN_W 0.1  /* px: narrower frames below the first level are not drawn */
#define MAX_NODES (1u << 22)

struct node {
    uint32_t frame; /* into the profile's frames; UINT32_MAX for the root */
    uint32_t child, next;
    uint32_t depth;
    uint64_t count, a_count;
    double x;
};

struct tree {
    const struct h2b_prof *p;
    struct node *n;
    size_t len, cap;
    uint32_t max_depth;
};

static int tree_node(struct tree *t, uint32_t frame, uint32_t depth, uint32_t *out)
{
    if (t->len >= MAX_NODES)
        return H2B_ERR_RANGE;
    if (t->len == t->cap) {
        struct node *n = h2b_array_grow(t->n, &t->cap, t->len + 1, sizeof(*n), 1024);
        if (!n)
            return H2B_ERR_NOMEM;
        t->n = n;
    }
    t->n[t->len] = (struct node){frame, UINT32_MAX, UINT32_MAX, depth, 0, 0, 0};
    if (depth > t->max_depth)
        t->max_depth = depth;
    *out = (uint32_t)t->len++;
    return H2B_OK;
}

static const char *frame_name(const struct tree *t, uint32_t frame)
{
    return frame == UINT32_MAX ? "all" : t->p->frames[frame].name;
}

/* The child of parent for frame, created if missing. */
static int child_of(struct tree *t, uint32_t parent, uint32_t frame, uint32_t *out)
{
    for (uint32_t c = t->n[parent].child; c != UINT32_MAX; c = t->n[c].next)
        if (t->n[c].frame == frame) {
            *out = c;
            return H2B_OK;
        }
    uint32_t c;
    int rc = tree_node(t, frame, t->n[parent].depth + 1, &c);
    if (rc)
        return rc;
    t->n[c].next = t->n[parent].child;
    t->n[parent].child = c;
    *out = c;
    return H2B_OK;
}

static int tree_build(struct tree *t, const struct h2b_prof *p)
{
    memset(t, 0, sizeof(*t));
    t->p = p;
    uint32_t root;
    int rc = tree_node(t, UINT32_MAX, 0, &root);
    for (size_t i = 0; i < p->nstacks && rc == H2B_OK; i++) {
        const struct h2b__prof_stack *s = &p->stacks[i];
        uint32_t at = root;
        t->n[root].count += s->count;
        for (uint32_t k = 0; k < s->len && rc == H2B_OK; k++) {
            if ((rc = child_of(t, at, p->ids[s->off + k], &at)) == H2B_OK)
                t->n[at].count += s->count;
        }
    }
    return rc;
}

/* Adds a's samples to the nodes of t (b's tree) whose path a shares. */
static void tree_add_a(struct tree *t, const struct h2b_prof *a)
{
    t->n[0].a_count = a->samples;
    for (size_t i = 0; i < a->nstacks; i++) {
        const struct h2b__prof_stack *s = &a->stacks[i];
        uint32_t at = 0;
        for (uint32_t k = 0; k < s->len; k++) {
            const struct h2b__prof_frame *f = &a->frames[a->ids[s->off + k]];
            long id = h2b__prof_find_frame(t->p, f->name, f->dso);
            uint32_t c = t->n[at].child;
            while (id >= 0 && c != UINT32_MAX && t->n[c].frame != (uint32_t)id)
                c = t->n[c].next;
            if (id < 0 || c == UINT32_MAX)
                break;
            t->n[c].a_count += s->count;
            at = c;
        }
    }
}

static const struct tree *sort_tree;

static int cmp_child(const void *x, const void *y)
{
    const struct node *a = &sort_tree->n[*(const uint32_t *)x];
    const struct node *b = &sort_tree->n[*(const uint32_t *)y];
    int c = strcmp(frame_name(sort_tree, a->frame), frame_name(sort_tree, b->frame));
    if (c)
        return c;
    return strcmp(sort_tree->p->frames[a->frame].dso, sort_tree->p->frames[b->frame].dso);
}

/* Sorts every sibling list by name and lays out x (in samples from the left). */
static int tree_layout(struct tree *t)
{
    uint32_t *kids = malloc(t->len * sizeof(*kids));
    uint32_t *work = malloc(t->len * sizeof(*work));
    if (!kids || !work) {
        free(kids);
        free(work);
        return H2B_ERR_NOMEM;
    }
    sort_tree = t;
    size_t top = 0;
    work[top++] = 0;
    t->n[0].x = 0;
    while (top) {
        uint32_t at = work[--top];
        size_t k = 0;
        for (uint32_t c = t->n[at].child; c != UINT32_MAX; c = t->n[c].next)
            kids[k++] = c;
        qsort(kids, k, sizeof(*kids), cmp_child);
        double x = t->n[at].x;
        for (size_t i = 0; i < k; i++) {
            t->n[kids[i]].x = x;
            x += (double)t->n[kids[i]].count;
            t->n[kids[i]].next = i + 1 < k ? kids[i + 1] : UINT32_MAX;
            work[top++] = kids[i];
        }
        t->n[at].child = k ? kids[0] : UINT32_MAX;
    }
    free(kids);
    free(work);
    return H2B_OK;
}

/* ---- colours ---- */

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* base colours of the classes, in enum order (also the legend) */
static const int class_rgb[H2B_PROF_NDSO][3] = {
    {232, 145, 58},  /* kernel: orange */
    {78, 143, 214},  /* nghttp2: blue */
    {155, 107, 214}, /* tls: purple */
    {79, 181, 106},  /* libc: green */
    {224, 195, 65},  /* own: yellow */
    {160, 160, 160}, /* other: grey */
};

static void class_colour(int cls, const char *name, int rgb[3])
{
    /* +-12 % in lightness by name, so adjacent frames of one class stay distinct */
    double v = 0.88 + (double)(name_hash(name) % 1000) / 1000.0 * 0.24;
    for (int i = 0; i < 3; i++) {
        double c = class_rgb[cls][i] * v;
        rgb[i] = c > 255 ? 255 : (int)c;
    }
}

static void diff_colour(double delta, double maxabs, int rgb[3])
{
    double i = maxabs > 0 ? fabs(delta) / maxabs : 0;
    i = i > 1 ? 1 : i;
    int fade = (int)lround(235.0 * (1 - i)) + 20 * (i == 0);
    if (delta > 0) {
        rgb[0] = 255, rgb[1] = fade, rgb[2] = fade;
    } else if (delta < 0) {
        rgb[0] = fade, rgb[1] = fade, rgb[2] = 255;
    } else {
        rgb[0] = rgb[1] = rgb[2] = 250;
    }
}

/* ---- the SVG ---- */

static const char script_js[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var PX="
    "10"
    ", PW="
    "1180"
    ", CW=7, frames=[], zoomed=null, details, hits;\n"
    "function label(g,w){var n=g.fname; var k=Math.floor(w/CW)-1; if(k<3) return '';\n"
    "  return n.length<=k? n : n.substring(0,k-2)+'..';}\n"
    "function place(g,x,w,show){var r=g.rect;\n"
    "  g.style.display=show?'':'none'; if(!show) return;\n"
    "  r.setAttribute('x',x.toFixed(2)); r.setAttribute('width',Math.max(w,0).toFixed(2));\n"
    "  g.text.setAttribute('x',(x+3).toFixed(2)); g.text.textContent=label(g,w);}\n"
    "function zoom(g){zoomed=g; var x0=g.ox, w0=g.ow, s=PW/w0;\n"
    "  for(var i=0;i<frames.length;i++){var f=frames[i];\n"
    "    if(f.oy>g.oy){var on=f.ox<=x0+1e-6&&f.ox+f.ow>=x0+w0-1e-6;\n"
    "      place(f,PX,PW,on); f.rect.style.opacity=on?'0.6':'';}\n"
    "    else{var inside=f.ox>=x0-1e-6&&f.ox+f.ow<=x0+w0+1e-6;\n"
    "      place(f,PX+(f.ox-x0)*s,f.ow*s,inside&&f.ow*s>=0.1); f.rect.style.opacity='';}}\n"
    "  document.getElementById('unzoom').style.display='';}\n"
    "function unzoom(){zoomed=null; for(var i=0;i<frames.length;i++){var f=frames[i];\n"
    "  place(f,f.ox,f.ow,true); f.rect.style.opacity='';}\n"
    "  document.getElementById('unzoom').style.display='none';}\n"
    "function search(){var t=prompt('Search frames (regular expression)',''); if(t===null) "
    "return;\n"
    "  var re; try{re=new RegExp(t);}catch(e){hits.textContent='bad expression'; return;}\n"
    "  var n=0; for(var i=0;i<frames.length;i++){var f=frames[i], m=t!==''&&re.test(f.fname);\n"
    "    f.rect.style.fill=m?'rgb(230,0,230)':''; if(m) n++;}\n"
    "  hits.textContent=t===''?'':n+' frames match';}\n"
    "window.addEventListener('load',function(){details=document.getElementById('details');\n"
    "  hits=document.getElementById('hits');\n"
    "  var gs=document.getElementsByClassName('f');\n"
    "  for(var i=0;i<gs.length;i++){var g=gs[i]; g.rect=g.getElementsByTagName('rect')[0];\n"
    "    g.text=g.getElementsByTagName('text')[0];\n"
    "    g.fname=g.getAttribute('data-name');\n"
    "    g.ox=+g.rect.getAttribute('x'); g.ow=+g.rect.getAttribute('width');\n"
    "    g.oy=+g.rect.getAttribute('y'); frames.push(g);\n"
    "    g.addEventListener('click',function(e){zoom(this); e.stopPropagation();});\n"
    "    g.addEventListener('mouseover',function(){details.textContent=\n"
    "      this.getElementsByTagName('title')[0].textContent;});\n"
    "    g.addEventListener('mouseout',function(){details.textContent=' ';});}\n"
    "  document.getElementById('bg').addEventListener('click',unzoom);\n"
    "  document.getElementById('unzoom').addEventListener('click',unzoom);\n"
    "  document.getElementById('search').addEventListener('click',search);});\n"
    "]]></script>\n";

/* The label for a frame of width w px: the name cut to fit (never inside a UTF-8 sequence),
 * ".." marking a cut; empty below three characters. */
static void frame_label(const char *name, double w, char *buf, size_t size)
{
    long fit = (long)(w / CHAR_W) - 1;
    size_t n = strlen(name);
    buf[0] = '\0';
    if (fit < 3)
        return;
    if ((long)n <= fit) {
        snprintf(buf, size, "%s", name);
        return;
    }
    size_t cut = (size_t)(fit - 2) < size - 3 ? (size_t)(fit - 2) : size - 3;
    while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
        cut--;
    memcpy(buf, name, cut);
    memcpy(buf + cut, "..", 3);
}

static void emit_frame(struct h2b_buf *b, const struct tree *t, const struct node *nd, double y,
                       double scale, const int rgb[3], const struct h2b_prof *a)
{
    const char *name = frame_name(t, nd->frame);
    const char *dso = nd->frame == UINT32_MAX ? "" : t->p->frames[nd->frame].dso;
    const char *cls = nd->frame == UINT32_MAX ? "" : h2b_prof_dso_name(t->p->frames[nd->frame].cls);
    double x = PAD_X + nd->x * scale, w = (double)nd->count * scale;
    char label[512];
    h2b_buf_printf(b, "<g class=\"f\" data-name=\"");
    h2b_buf_xml(b, name);
    h2b_buf_printf(b, "\"><title>");
    h2b_buf_xml(b, name);
    if (*dso) {
        h2b_buf_printf(b, " [");
        h2b_buf_xml(b, dso);
        h2b_buf_printf(b, ", %s]", cls);
    }
    double share = 100.0 * (double)nd->count / (double)(t->p->samples ? t->p->samples : 1);
    h2b_buf_printf(b, " (%llu samples, %.2f%%)", (unsigned long long)nd->count, share);
    if (a)
        h2b_buf_printf(b, " A: %llu samples, %.2f%%; B - A: %+.2f points",
                       (unsigned long long)nd->a_count,
                       100.0 * (double)nd->a_count / (double)(a->samples ? a->samples : 1),
                       share - 100.0 * (double)nd->a_count / (double)(a->samples ? a->samples : 1));
    h2b_buf_printf(b,
                   "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
                   "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.0f\">",
                   x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3, y + 11.5);
    frame_label(name, w, label, sizeof(label));
    h2b_buf_xml(b, label);
    h2b_buf_printf(b, "</text></g>\n");
}

static int write_svg(const struct tree *t, const struct h2b_prof *a, const char *title,
                     const char *path, struct h2b_diag *diag)
{
    struct h2b_buf b = {0};
    const struct h2b_prof *p = t->p;
    uint32_t depth = t->max_depth;
    double height = TOP_H + (double)(depth + 1) * FRAME_H + BOTTOM_H;
    double scale = PLOT_W / (double)(p->samples ? p->samples : 1);
    h2b_buf_printf(&b,
                   "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                   "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\""
                   " xmlns=\"http://www.w3.org/2000/svg\">\n",
                   IMG_W, height, IMG_W, height);
    h2b_buf_printf(&b, "<title>");
    h2b_buf_xml(&b, title);
    h2b_buf_printf(&b,
                   "</title>\n<style>text{font-family:monospace;font-size:12px;fill:#000}"
                   " .f{cursor:pointer} .f:hover rect{stroke:#000;stroke-width:0.5}"
                   " .h{font-size:17px;text-anchor:middle} .u{cursor:pointer;fill:#225}</style>\n");
    h2b_buf_append(&b, script_js, sizeof(script_js) - 1);
    h2b_buf_printf(&b,
                   "<rect id=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
                   "fill=\"rgb(248,248,242)\"/>\n<text class=\"h\" x=\"%.0f\" y=\"22\">",
                   IMG_W, height, IMG_W / 2);
    h2b_buf_xml(&b, title);
    h2b_buf_printf(&b, "</text>\n<text x=\"%.0f\" y=\"42\">%llu samples", PAD_X,
                   (unsigned long long)p->samples);
    if (a)
        h2b_buf_printf(&b,
                       " in B, %llu in A; colour: change of each frame's share, "
                       "red = larger in B, blue = smaller",
                       (unsigned long long)a->samples);
    h2b_buf_printf(&b,
                   "</text>\n<text id=\"unzoom\" class=\"u\" x=\"%.0f\" y=\"42\" "
                   "style=\"display:none\">Reset zoom</text>\n"
                   "<text id=\"search\" class=\"u\" x=\"%.0f\" y=\"42\">Search</text>\n"
                   "<text id=\"hits\" x=\"%.0f\" y=\"42\"> </text>\n",
                   IMG_W / 2, IMG_W - PAD_X - 60, IMG_W - PAD_X - 220);

    double maxabs = 0;
    if (a)
        for (size_t i = 1; i < t->len; i++) {
            double d = (double)t->n[i].count / (double)(p->samples ? p->samples : 1) -
                       (double)t->n[i].a_count / (double)(a->samples ? a->samples : 1);
            maxabs = fabs(d) > maxabs ? fabs(d) : maxabs;
        }
    /* depth-first from the root, skipping subtrees too narrow to see below the first level */
    uint32_t *work = malloc(t->len * sizeof(*work));
    if (!work) {
        h2b_buf_free(&b);
        return H2B_ERR_NOMEM;
    }
    size_t top = 0;
    work[top++] = 0;
    while (top) {
        const struct node *nd = &t->n[work[--top]];
        double w = (double)nd->count * scale;
        if (nd->depth > 1 && w < MIN_W)
            continue;
        int rgb[3];
        if (nd->frame == UINT32_MAX)
            rgb[0] = rgb[1] = rgb[2] = 200;
        else if (a)
            diff_colour((double)nd->count / (double)p->samples -
                            (double)nd->a_count / (double)(a->samples ? a->samples : 1),
                        maxabs, rgb);
        else
            class_colour(p->frames[nd->frame].cls, p->frames[nd->frame].name, rgb);
        double y = TOP_H + (double)(depth - nd->depth) * FRAME_H;
        emit_frame(&b, t, nd, y, scale, rgb, a);
        for (uint32_t c = nd->child; c != UINT32_MAX; c = t->n[c].next)
            work[top++] = c;
    }
    free(work);

    /* legend and the hover line */
    double ly = height - BOTTOM_H + 16;
    if (a) {
        h2b_buf_printf(
            &b,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"rgb(255,20,20)\"/>"
            "<text x=\"%.0f\" y=\"%.0f\">larger share in B</text>\n"
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"rgb(20,20,255)\"/>"
            "<text x=\"%.0f\" y=\"%.0f\">smaller share in B</text>\n",
            PAD_X, ly - 10, PAD_X + 16, ly, PAD_X + 170, ly - 10, PAD_X + 186, ly);
    } else {
        for (int c = 0; c < H2B_PROF_NDSO; c++) {
            double lx = PAD_X + c * 110.0;
            h2b_buf_printf(&b,
                           "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" "
                           "fill=\"rgb(%d,%d,%d)\"/><text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                           lx, ly - 10, class_rgb[c][0], class_rgb[c][1], class_rgb[c][2], lx + 16,
                           ly, h2b_prof_dso_name((enum h2b_prof_dso)c));
        }
    }
    h2b_buf_printf(&b, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n</svg>\n", PAD_X,
                   height - 8);
    char *text = NULL;
    int rc = h2b_buf_finish(&b, &text);
    if (rc) {
        h2b_diag_at(diag, path, 0, 0, "out of memory drawing the flame graph");
        return rc;
    }
    rc = h2b_file_write_atomic(path, text, strlen(text), diag);
    free(text);
    return rc;
}

static int draw(const struct h2b_prof *a, const struct h2b_prof *b, const char *title,
                const char *path, struct h2b_diag *diag)
{
    struct tree t;
    int rc = tree_build(&t, b);
    if (rc == H2B_OK && a)
        tree_add_a(&t, a);
    if (rc == H2B_OK)
        rc = tree_layout(&t);
    if (rc == H2B_OK)
        rc = write_svg(&t, a, title, path, diag);
    else
        h2b_diag_at(diag, path, 0, 0, "%s building the call tree", h2b_strerror(rc));
    free(t.n);
    return rc;
}

int h2b_prof_flame_svg(const struct h2b_prof *p, const char *title, const char *path,
                       struct h2b_diag *diag)
{
    return draw(NULL, p, title, path, diag);
}

int h2b_prof_diff_svg(const struct h2b_prof *a, const struct h2b_prof *b, const char *title,
                      const char *path, struct h2b_diag *diag)
{
    return draw(a, b, title, path, diag);
}
