/*
 * fmt/profile.c - the profile formats of rte-read (profile.h): folded
 * (collapsed stacks), pprof (gzipped profile.proto, by a small protobuf
 * encoder of our own) and flamegraph (one self-contained SVG with inline
 * JavaScript: search, click to zoom, no network).
 *
 * Which profile: --profile (rd_prof_pick). Values: CPU samples; for alloc
 * and inuse the estimated bytes (folded, flamegraph), all four heap values
 * in pprof. The pprof encoder is fmt/profile_pprof.c's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"
#include "ptree.h"
#include "rte/profile.h"
#include "sinks.h"

/* ---- merged stacks (folded, flamegraph) -------------------------------- */

/* Stacks of function names, the root first, with their values: a process
 * and thread root frame where asked, tags dropped. */
struct merged {
	struct ptab t;
	double *v;
	uint32_t vcap;
};

static double value_of(const struct rd_prof *p, int which, uint32_t i)
{
	if (which == RD_PROF_CPU)
		return (double)p->cv[i].samples;
	return which == RD_PROF_ALLOC ? p->av[i].abytes : p->av[i].ibytes;
}

/* Are there several processes with stacks in t? */
static int many_procs(const struct ptab *t)
{
	for (uint32_t i = 1; i < t->n; i++)
		if (pkey(t, i)->proc != pkey(t, 0)->proc)
			return 1;
	return 0;
}

static int grow_values(struct merged *m, uint32_t j)
{
	uint32_t c = m->vcap ? m->vcap : 256;
	double *nv;

	if (j < m->vcap)
		return 0;
	while (c <= j)
		c *= 2;
	if (!(nv = realloc(m->v, c * sizeof *nv)))
		return -1;
	memset(nv + m->vcap, 0, (c - m->vcap) * sizeof *nv);
	m->v = nv;
	m->vcap = c;
	return 0;
}

static int merge_stacks(struct rd_prof *p, int which, struct merged *m)
{
	const struct ptab *t = which == RD_PROF_CPU ? &p->cst : &p->ast;
	uint32_t w[2 + 2 + RTE_PROFILE_MAX_FRAMES];
	int procs = many_procs(t);
	char b[128];

	memset(m, 0, sizeof *m);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct skey *k = pkey(t, i);
		uint32_t n = 0;
		int64_t j;
		int isnew;

		if (rd_ptree_opts.by_exe) /* one root per executable */
			w[n++] = p->pp[k->proc].exe ? p->pp[k->proc].exe
			                            : pstr_id(p, "?");
		else if (procs) {
			snprintf(b, sizeof b, "pid %ld", p->pp[k->proc].pid);
			w[n++] = pstr_id(p, b);
		}
		if (rd_prof_by_thread) {
			const char *name = "";

			for (unsigned x = 0; x < p->pp[k->proc].nthr; x++)
				if (p->pp[k->proc].thr[x].tid == k->tid)
					name = p->pp[k->proc].thr[x].name;
			snprintf(b, sizeof b, "thread %d%s%s", (int)k->tid,
			         *name ? " " : "", name);
			w[n++] = pstr_id(p, b);
		}
		for (uint32_t x = k->n; x-- > 0;)
			w[n++] = p->fn[p->loc[k->loc[x]].func].name;
		j = ptab_get(&m->t, w, n * 4, &isnew);
		if (j < 0 || grow_values(m, (uint32_t)j) < 0) {
			p->oom = 1;
			return -1;
		}
		m->v[j] += value_of(p, which, i);
	}
	return 0;
}

static void merged_fini(struct merged *m)
{
	ptab_fini(&m->t);
	free(m->v);
}

static uint32_t mlen(const struct merged *m, uint32_t i)
{
	return m->t.e[i].len / 4;
}

static const uint32_t *mnames(const struct merged *m, uint32_t i)
{
	return (const uint32_t *)(const void *)m->t.e[i].key;
}

/* A frame name for folded output: ';' separates frames, newlines end
 * lines: both replaced. */
static void folded_name(struct rd_out *o, const char *s)
{
	for (; *s; s++)
		rd_out_ch(o, *s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s);
}

static void write_folded(struct rd_prof *p, int which, struct rd_out *o)
{
	struct merged m;

	if (merge_stacks(p, which, &m) == 0)
		for (uint32_t i = 0; i < m.t.n; i++) {
			uint64_t v = (uint64_t)llround(m.v[i]);
			const uint32_t *nm = mnames(&m, i);

			if (!v)
				continue;
			if (!mlen(&m, i))
				rd_out_str(o, "(no stack)");
			for (uint32_t j = 0; j < mlen(&m, i); j++) {
				if (j)
					rd_out_ch(o, ';');
				folded_name(o, pstr(p, nm[j]));
			}
			rd_out_ch(o, ' ');
			rd_out_u64(o, v);
			rd_out_ch(o, '\n');
		}
	merged_fini(&m);
}

/* ---- flamegraph ----------------------------------------------------------- */

struct fnode {
	uint32_t name, child, next; /* child/next: node index + 1, 0: none */
	uint64_t v;
};

struct ftree {
	struct fnode *n;
	uint32_t len, cap;
	unsigned depth;
};

static int64_t fchild(struct ftree *t, uint32_t parent, uint32_t name)
{
	uint32_t *link = &t->n[parent].child;

	for (uint32_t c = *link; c; c = t->n[c - 1].next) {
		if (t->n[c - 1].name == name)
			return c - 1;
		link = &t->n[c - 1].next;
	}
	if (t->len == t->cap) {
		uint32_t cap = t->cap * 2;
		struct fnode *n = realloc(t->n, cap * sizeof *n);

		if (!n)
			return -1;
		t->n = n;
		t->cap = cap;
		/* moved: find the end of the list again */
		for (link = &t->n[parent].child; *link; link = &t->n[*link - 1].next)
			;
	}
	t->n[t->len] = (struct fnode){ name, 0, 0, 0 };
	*link = ++t->len;
	return t->len - 1;
}

/* A JavaScript string literal that is safe inside CDATA and XML: quotes,
 * backslashes, controls and <>& as \\uXXXX escapes. */
static void js_str(struct rd_out *o, const char *s)
{
	char b[8];

	rd_out_ch(o, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' ||
		    c == '&' || c >= 0x7f) { /* bytes >= 0x80: as Latin-1 */
			snprintf(b, sizeof b, "\\u%04x", c);
			rd_out_str(o, b);
		} else {
			rd_out_ch(o, (char)c);
		}
	}
	rd_out_ch(o, '"');
}

static void json_tree(const struct rd_prof *p, const struct ftree *t,
                      uint32_t i, struct rd_out *o)
{
	rd_out_str(o, "{\"n\":");
	js_str(o, i ? pstr(p, t->n[i].name) : "all");
	rd_out_str(o, ",\"v\":");
	rd_out_u64(o, t->n[i].v);
	if (t->n[i].child) {
		rd_out_str(o, ",\"c\":[");
		for (uint32_t c = t->n[i].child; c; c = t->n[c - 1].next) {
			json_tree(p, t, c - 1, o);
			if (t->n[c - 1].next)
				rd_out_ch(o, ',');
		}
		rd_out_ch(o, ']');
	}
	rd_out_ch(o, '}');
}

/* The page's script: lays the frames out from `data` (root at the bottom,
 * widths proportional to values), click to zoom, search (the button or
 * ?s=REGEX), and writes a check line into #rte-check: the number of frames
 * drawn, the root's total, the sum of self values (equal to the total if
 * every frame is at least as wide as its children) and whether every
 * frame's children fit in it. */
static const char flame_js[] =
"var W=1200,FH=16,PAD=10,TOP=40,NS='http://www.w3.org/2000/svg';\n"
"var H=+document.documentElement.getAttribute('height');\n"
"var zoomed=data,matchRe=null;\n"
"function up(n,p,d){n.p=p;n.d=d;(n.c||[]).forEach(function(k){up(k,n,d+1);});}\n"
"function esc(s){return s.replace(/&/g,'&amp;').replace(/</g,'&lt;');}\n"
"function color(s){var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))|0;\n"
" return 'rgb('+(205+(h&50))+','+(90+((h>>>8)&120))+','+(30+((h>>>16)&50))+')';}\n"
"function box(g,n,x,w){var y=H-TOP-FH*(n.d+1),e=document.createElementNS(NS,'g');\n"
" e.setAttribute('class','f');e.setAttribute('data-v',n.v);e.setAttribute('data-d',n.d);\n"
" var t=document.createElementNS(NS,'title');t.textContent=n.n+' ('+n.v+', '+(100*n.v/data.v).toFixed(2)+'%)';\n"
" var r=document.createElementNS(NS,'rect');r.setAttribute('x',x);r.setAttribute('y',y);\n"
" r.setAttribute('width',Math.max(w-0.5,0.1));r.setAttribute('height',FH-1);r.setAttribute('rx',2);\n"
" r.setAttribute('fill',matchRe&&matchRe.test(n.n)?'rgb(230,0,230)':color(n.n));\n"
" var l=document.createElementNS(NS,'text');l.setAttribute('x',x+3);l.setAttribute('y',y+FH-4);\n"
" var c=Math.floor(w/7);l.textContent=c<3?'':(n.n.length<=c?n.n:n.n.substring(0,c-2)+'..');\n"
" e.appendChild(t);e.appendChild(r);e.appendChild(l);\n"
" e.addEventListener('click',function(){zoomed=n;draw();});\n"
" e.addEventListener('mouseover',function(){document.getElementById('details').textContent=t.textContent;});\n"
" g.appendChild(e);return w;}\n"
"function walk(g,n,x,s){var w=n.v*s;if(w<0.1)return 0;box(g,n,x,w);var cx=x;\n"
" (n.c||[]).forEach(function(k){walk(g,k,cx,s);cx+=k.v*s;});return 1;}\n"
"function draw(){var g=document.getElementById('frames');while(g.firstChild)g.removeChild(g.firstChild);\n"
" for(var a=zoomed.p;a;a=a.p)box(g,a,PAD,W-2*PAD);\n"
" if(zoomed.v>0)walk(g,zoomed,PAD,(W-2*PAD)/zoomed.v);\n"
" document.getElementById('unzoom').style.opacity=zoomed===data?0.3:1;}\n"
"function matched(n){if(matchRe&&matchRe.test(n.n))return n.v;var s=0;\n"
" (n.c||[]).forEach(function(k){s+=matched(k);});return s;}\n"
"function search(re){matchRe=re?new RegExp(re):null;draw();\n"
" document.getElementById('matched').textContent=matchRe?'Matched: '+(100*matched(data)/Math.max(data.v,1)).toFixed(2)+'%':'';}\n"
"function check(){var nodes=0,self=0,ok=1;(function v(n){nodes++;var s=0;\n"
" (n.c||[]).forEach(function(k){s+=k.v;v(k);});if(s>n.v)ok=0;self+=n.v-s;})(data);\n"
" var drawn=document.querySelectorAll('#frames g.f').length;\n"
" var w1=0;document.querySelectorAll('#frames g.f').forEach(function(e){if(e.getAttribute('data-d')==='1')\n"
"  w1+=+e.querySelector('rect').getAttribute('width')+0.5;});\n"
" document.getElementById('rte-check').textContent='frames='+(nodes-1)+' drawn='+(drawn-1)+' total='+data.v+\n"
"  ' self_sum='+self+' consistent='+ok+' width_ratio='+(data.v?(w1/(W-2*PAD)).toFixed(3):'1.000');}\n"
"up(data,null,0);draw();check();\n"
"document.getElementById('unzoom').addEventListener('click',function(){zoomed=data;draw();});\n"
"document.getElementById('search').addEventListener('click',function(){\n"
" var s=prompt('Search (regular expression)','');if(s!==null)search(s||null);});\n"
"var q=/[?&]s=([^&]*)/.exec(location.search);if(q)search(decodeURIComponent(q[1]));\n";

static void write_flame(struct rd_prof *p, int which, struct rd_out *o)
{
	static const char *what[] = { "", "CPU samples", "allocated bytes (estimated)",
	                              "bytes in use at the end (estimated)" };
	struct ftree t = { NULL, 0, 0, 0 };
	struct merged m;
	unsigned h;

	if (merge_stacks(p, which, &m) < 0 || !(t.n = calloc(256, sizeof *t.n)))
		goto out;
	t.cap = 256;
	t.len = 1;
	for (uint32_t i = 0; i < m.t.n; i++) {
		uint64_t v = (uint64_t)llround(m.v[i]);
		const uint32_t *nm = mnames(&m, i);
		uint32_t cur = 0;

		if (!v)
			continue;
		t.n[0].v += v;
		if (mlen(&m, i) > t.depth)
			t.depth = mlen(&m, i);
		for (uint32_t j = 0; j < mlen(&m, i); j++) {
			int64_t c = fchild(&t, cur, nm[j]);

			if (c < 0) {
				p->oom = 1;
				goto out;
			}
			cur = (uint32_t)c;
			t.n[cur].v += v;
		}
	}
	h = 16 * (t.depth + 1) + 80;
	rd_out_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	              "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"");
	rd_out_u64(o, h);
	rd_out_str(o, "\" viewBox=\"0 0 1200 ");
	rd_out_u64(o, h);
	rd_out_str(o, "\">\n<style>text{font-family:monospace;font-size:12px}"
	              " g.f text{pointer-events:none} g.f:hover rect{stroke:#000;stroke-width:0.5}"
	              " .btn{cursor:pointer;fill:#225}</style>\n"
	              "<rect x=\"0\" y=\"0\" width=\"1200\" height=\"100%\" fill=\"#f8f8f0\"/>\n"
	              "<text x=\"600\" y=\"20\" text-anchor=\"middle\" style=\"font-size:16px\">rte flame graph: ");
	rd_out_str(o, what[which]);
	rd_out_str(o, "</text>\n<text id=\"unzoom\" class=\"btn\" x=\"10\" y=\"20\">Reset zoom</text>\n"
	              "<text id=\"search\" class=\"btn\" x=\"1100\" y=\"20\">Search</text>\n"
	              "<text id=\"matched\" x=\"1190\" text-anchor=\"end\" y=\"");
	rd_out_u64(o, h - 10);
	rd_out_str(o, "\"></text>\n<text id=\"details\" x=\"10\" y=\"");
	rd_out_u64(o, h - 10);
	rd_out_str(o, "\"> </text>\n<text id=\"rte-check\" x=\"10\" y=\"34\" style=\"font-size:9px;fill:#999\"></text>\n"
	              "<g id=\"frames\"></g>\n<script type=\"text/ecmascript\"><![CDATA[\nvar data=");
	/* names go through js_str: no "]]>" or markup can appear raw */
	json_tree(p, &t, 0, o);
	rd_out_str(o, ";\n");
	rd_out_str(o, flame_js);
	rd_out_str(o, "]]></script>\n</svg>\n");
out:
	free(t.n);
	merged_fini(&m);
}

/* ---- the sink ------------------------------------------------------------- */

struct psink {
	struct rd_sink sink;
	enum rd_prof_fmt fmt;
	struct rd_prof *p;
};

static void prof_event(struct rd_sink *s, struct rd_ctx *c, const struct rd_item *it)
{
	if (it->pass)
		rd_prof_event(((struct psink *)s)->p, c->procs, it);
}

/* --by exe: each process's executable (its last image's argv[0], as the
 * summary's --by exe table names it). */
static void exe_names(struct rd_prof *p, struct rd_procs *P)
{
	struct rd_ptree *T = rd_ptree_build(P);
	char b[64];
	int x;

	for (unsigned i = 0; i < p->npp; i++)
		if (T && (x = rd_ptree_find(T, p->pp[i].pid)) >= 0)
			p->pp[i].exe = pstr_id(p, rd_ptree_exe(&T->n[x], b, sizeof b));
}

static void prof_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct psink *ps = (struct psink *)s;
	struct rd_prof *p = ps->p;
	int which;
	uint64_t bad;

	for (unsigned i = 0; i < c->procs->nproc; i++) {
		const struct rd_proc *pr = c->procs->proc[i];

		if (pr->index < p->npp)
			p->pp[pr->index].wall_ns = rd_proc_wall(pr);
	}
	if (rd_ptree_opts.by_exe)
		exe_names(p, c->procs);
	rd_prof_settle(p);
	which = rd_prof_pick(p);
	if ((which == RD_PROF_CPU ? p->cst.n : p->ast.n) == 0)
		fprintf(stderr, "rte-read: warning: no %s samples in the input%s%s\n",
		        which == RD_PROF_CPU ? "CPU (rte.sample)"
		                             : "allocation (rte.alloc.sample)",
		        rd_prof_span_opt ? " inside span " : "",
		        rd_prof_span_opt ? rd_prof_span_opt : "");
	if (ps->fmt == RD_PFMT_FOLDED)
		write_folded(p, which, c->out);
	else if (ps->fmt == RD_PFMT_FLAME)
		write_flame(p, which, c->out);
	else
		rd_prof_write_pprof(p, which, c->out);
	if ((bad = rd_prof_malformed(p)))
		fprintf(stderr, "rte-read: warning: %" PRIu64 " malformed profiler record%s skipped\n",
		        bad, bad == 1 ? "" : "s");
	if (p->oom)
		fprintf(stderr, "rte-read: warning: out of memory: the profile is incomplete\n");
}

static void prof_destroy(struct rd_sink *s)
{
	rd_prof_free(((struct psink *)s)->p);
	free(s);
}

struct rd_sink *rd_sink_profile(enum rd_prof_fmt fmt)
{
	struct psink *s = calloc(1, sizeof *s);

	if (!s || !(s->p = rd_prof_new())) {
		free(s);
		return NULL;
	}
	s->sink = (struct rd_sink){ NULL, prof_event, prof_finish, prof_destroy, NULL };
	s->fmt = fmt;
	return &s->sink;
}

const char *rd_prof_clock(uint32_t flags, char *buf, size_t len)
{
	unsigned e = (flags >> RTE_SAMPLE_WHY_SHIFT) & 0xffu;

	if (flags & RTE_SAMPLE_WALL)
		snprintf(buf, len, "wall clock (RTE_PROFILE_MODE=wall): every "
		         "thread, running or blocked; weights are wall time");
	else if (flags & RTE_SAMPLE_PERF)
		snprintf(buf, len, "perf_event cpu-clock (RTE_PROFILE_CLOCK=perf)");
	else if (flags & RTE_SAMPLE_PERF_RATE)
		snprintf(buf, len, "CPU-time timer (tick-bound): the perf clock "
		         "was asked above its 10000 Hz");
	else if (flags & RTE_SAMPLE_PERF_FAIL)
		snprintf(buf, len, "CPU-time timer (tick-bound): the perf clock "
		         "was asked, perf_event_open failed: %s%s",
		         e ? strerror((int)e) : "?",
		         e == 1 || e == 13 ? " (perf_event_paranoid above 2, "
		                             "or a seccomp filter)"
		                           : "");
	else
		snprintf(buf, len, "CPU-time timer (tick-bound; the default: "
		         "RTE_PROFILE_CLOCK=perf for the asked rate)");
	return buf;
}
