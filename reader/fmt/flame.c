/*
 * fmt/flame.c - the flame graph page (profile_int.h rd_flame_*): a tree
 * of frames with one value (a profile) or two (a differential graph: the
 * base and the new run), written as one self-contained interactive SVG:
 * its width the page's (drawn again on resize), click a frame to zoom,
 * Search (a regular expression: matches highlighted, their share summed;
 * also ?s=REGEX in the address), a tooltip and a details line with each
 * frame's samples and share. In a differential graph widths are the new
 * run's and each frame is red where its share grew, blue where it
 * shrank, the deeper the more (as FlameGraph's difffolded.pl draws).
 * Used by fmt/profile.c (-f flamegraph) and flamediff.c. Not thread-safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"
#include "utf8.h"

int rd_flame_init(struct ftree *t)
{
	memset(t, 0, sizeof *t);
	if (!(t->n = calloc(256, sizeof *t->n)))
		return -1;
	t->cap = 256;
	t->len = 1; /* the root, "all" */
	return 0;
}

void rd_flame_fini(struct ftree *t)
{
	free(t->n);
	t->n = NULL;
}

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
	t->n[t->len] = (struct fnode){ name, 0, 0, 0, 0 };
	*link = ++t->len;
	return t->len - 1;
}

int rd_flame_add(struct ftree *t, const uint32_t *names, uint32_t n,
                 uint64_t v, uint64_t v0)
{
	uint32_t cur = 0;

	t->n[0].v += v;
	t->n[0].v0 += v0;
	if (n > t->depth)
		t->depth = n;
	for (uint32_t j = 0; j < n; j++) {
		int64_t c = fchild(t, cur, names[j]);

		if (c < 0)
			return -1;
		cur = (uint32_t)c;
		t->n[cur].v += v;
		t->n[cur].v0 += v0;
	}
	return 0;
}

/* A JavaScript string literal that is safe inside CDATA and XML: quotes,
 * backslashes, controls and <>& as \\uXXXX escapes, and every other
 * character past ASCII too (a pair of surrogates past U+FFFF), so that the
 * SVG stays ASCII and no character XML forbids (U+FFFE) appears raw; a
 * byte that is not UTF-8 as \\udcXX, the rule of every JSON output
 * (utf8.h). */
static void js_str(struct rd_out *o, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), k;
	char b[16];

	rd_out_ch(o, '"');
	for (size_t i = 0; i < n; i += k) {
		unsigned c = u[i];

		k = rte_utf8_len(u + i, n - i);
		if (c >= 0x20 && c < 0x7f && !strchr("\"\\<>&", (int)c)) {
			rd_out_ch(o, (char)c);
			continue;
		}
		if (k == 0) {
			k = 1;
			c |= 0xdc00;
		} else if (k > 1) { /* the code point: its lead's bits, then 6 a byte */
			c &= 0x7fu >> k;
			for (size_t j = 1; j < k; j++)
				c = c << 6 | (u[i + j] & 0x3fu);
		}
		if (c >= 0x10000)
			snprintf(b, sizeof b, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
			         0xdc00 + ((c - 0x10000) & 0x3ff));
		else
			snprintf(b, sizeof b, "\\u%04x", c);
		rd_out_str(o, b);
	}
	rd_out_ch(o, '"');
}

static void json_tree(const struct rd_prof *p, const struct ftree *t,
                      uint32_t i, int diff, struct rd_out *o)
{
	rd_out_str(o, "{\"n\":");
	js_str(o, i ? pstr(p, t->n[i].name) : "all");
	rd_out_str(o, ",\"v\":");
	rd_out_u64(o, t->n[i].v);
	if (diff) {
		rd_out_str(o, ",\"b\":");
		rd_out_u64(o, t->n[i].v0);
	}
	if (t->n[i].child) {
		rd_out_str(o, ",\"c\":[");
		for (uint32_t c = t->n[i].child; c; c = t->n[c - 1].next) {
			json_tree(p, t, c - 1, diff, o);
			if (t->n[c - 1].next)
				rd_out_ch(o, ',');
		}
		rd_out_ch(o, ']');
	}
	rd_out_ch(o, '}');
}

/* The page's script: lays the frames out from `data` (root at the
 * bottom, widths proportional to values, the page's width), click to
 * zoom, search, tooltips; `diff`: `b` is each frame's base value. */
static const char flame_js[] =
"var FH=16,PAD=10,TOP=40,NS='http://www.w3.org/2000/svg',W=1200;\n"
"var root=document.documentElement,H=+root.getAttribute('height');\n"
"var zoomed=data,matchRe=null,maxd=0;\n"
"function up(n,p,d){n.p=p;n.d=d;(n.c||[]).forEach(function(k){up(k,n,d+1);});}\n"
"function share(n){return data.v?n.v/data.v:0;}\n"
"function bshare(n){return data.b?(n.b||0)/data.b:0;}\n"
"function delta(n){return share(n)-bshare(n);}\n"
"function maxdelta(n){maxd=Math.max(maxd,Math.abs(delta(n)));(n.c||[]).forEach(maxdelta);}\n"
"function color(n){var s=n.n;if(DIFF){var q=maxd>0?Math.min(1,Math.abs(delta(n))/maxd):0,\n"
"  c=Math.round(255-200*q);return delta(n)>0?'rgb(255,'+c+','+c+')':delta(n)<0?'rgb('+c+','+c+',255)':'rgb(240,240,240)';}\n"
" var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))|0;\n"
" return 'rgb('+(205+(h&50))+','+(90+((h>>>8)&120))+','+(30+((h>>>16)&50))+')';}\n"
"function label(n){var t=n.n+' ('+n.v+' samples, '+(100*share(n)).toFixed(2)+'%';\n"
" if(DIFF){var d=100*delta(n);t+='; base '+(n.b||0)+', '+(100*bshare(n)).toFixed(2)+'%; '+(d>=0?'+':'')+d.toFixed(2)+' points';}\n"
" return t+')';}\n"
"function box(g,n,x,w){var y=H-TOP-FH*(n.d+1),e=document.createElementNS(NS,'g');\n"
" e.setAttribute('class','f');e.setAttribute('data-v',n.v);e.setAttribute('data-d',n.d);\n"
" var t=document.createElementNS(NS,'title');t.textContent=label(n);\n"
" var r=document.createElementNS(NS,'rect');r.setAttribute('x',x);r.setAttribute('y',y);\n"
" r.setAttribute('width',Math.max(w-0.5,0.1));r.setAttribute('height',FH-1);r.setAttribute('rx',2);\n"
" r.setAttribute('fill',matchRe&&matchRe.test(n.n)?'rgb(230,0,230)':color(n));\n"
" var l=document.createElementNS(NS,'text');l.setAttribute('x',x+3);l.setAttribute('y',y+FH-4);\n"
" var c=Math.floor(w/7);l.textContent=c<3?'':(n.n.length<=c?n.n:n.n.substring(0,c-2)+'..');\n"
" e.appendChild(t);e.appendChild(r);e.appendChild(l);\n"
" e.addEventListener('click',function(){zoomed=n;draw();});\n"
" e.addEventListener('mouseover',function(){document.getElementById('details').textContent=t.textContent;});\n"
" g.appendChild(e);return w;}\n"
"function walk(g,n,x,s){var w=n.v*s;if(w<0.1)return;box(g,n,x,w);var cx=x;\n"
" (n.c||[]).forEach(function(k){walk(g,k,cx,s);cx+=k.v*s;});}\n"
"function place(){W=Math.max(300,root.getBoundingClientRect().width||window.innerWidth||1200);\n"
" document.getElementById('bg').setAttribute('width',W);\n"
" document.getElementById('title').setAttribute('x',W/2);\n"
" document.getElementById('search').setAttribute('x',W-PAD-60);\n"
" document.getElementById('matched').setAttribute('x',W-PAD);}\n"
"function draw(){place();var g=document.getElementById('frames');while(g.firstChild)g.removeChild(g.firstChild);\n"
" for(var a=zoomed.p;a;a=a.p)box(g,a,PAD,W-2*PAD);\n"
" if(zoomed.v>0)walk(g,zoomed,PAD,(W-2*PAD)/zoomed.v);\n"
" document.getElementById('unzoom').style.opacity=zoomed===data?0.3:1;}\n"
"function matched(n){if(matchRe&&matchRe.test(n.n))return n.v;var s=0;\n"
" (n.c||[]).forEach(function(k){s+=matched(k);});return s;}\n"
"function search(re){matchRe=re?new RegExp(re):null;draw();\n"
" document.getElementById('matched').textContent=matchRe?'Matched: '+(100*matched(data)/Math.max(data.v,1)).toFixed(2)+'%':'';}\n"
"up(data,null,0);if(DIFF)maxdelta(data);draw();\n"
"window.addEventListener('resize',draw);\n"
"document.getElementById('unzoom').addEventListener('click',function(){zoomed=data;draw();});\n"
"document.getElementById('search').addEventListener('click',function(){\n"
" var s=prompt('Search (regular expression)','');if(s!==null)search(s||null);});\n"
"var q=/[?&]s=([^&]*)/.exec(location.search);if(q)search(decodeURIComponent(q[1]));\n";

void rd_flame_write(const struct rd_prof *p, const struct ftree *t,
                    const char *title, int diff, struct rd_out *o)
{
	unsigned h = 16 * (t->depth + 1) + 80;

	rd_out_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	              "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" height=\"");
	rd_out_u64(o, h);
	rd_out_str(o, "\">\n<style>text{font-family:monospace;font-size:12px}"
	              " g.f text{pointer-events:none} g.f:hover rect{stroke:#000;stroke-width:0.5}"
	              " .btn{cursor:pointer;fill:#225}</style>\n"
	              "<rect id=\"bg\" x=\"0\" y=\"0\" width=\"1200\" height=\"100%\" fill=\"#f8f8f0\"/>\n"
	              "<text id=\"title\" x=\"600\" y=\"20\" text-anchor=\"middle\" style=\"font-size:16px\">");
	/* the title is ours: plain words, no markup */
	rd_out_str(o, title);
	rd_out_str(o, "</text>\n<text id=\"unzoom\" class=\"btn\" x=\"10\" y=\"20\">Reset zoom</text>\n"
	              "<text id=\"search\" class=\"btn\" x=\"1130\" y=\"20\">Search</text>\n"
	              "<text id=\"matched\" x=\"1190\" text-anchor=\"end\" y=\"");
	rd_out_u64(o, h - 10);
	rd_out_str(o, "\"></text>\n<text id=\"details\" x=\"10\" y=\"");
	rd_out_u64(o, h - 10);
	rd_out_str(o, "\"> </text>\n"
	              "<g id=\"frames\"></g>\n<script type=\"text/ecmascript\"><![CDATA[\nvar DIFF=");
	rd_out_str(o, diff ? "1" : "0");
	rd_out_str(o, ",data=");
	/* names go through js_str: no "]]>" or markup can appear raw */
	json_tree(p, t, 0, diff, o);
	rd_out_str(o, ";\n");
	rd_out_str(o, flame_js);
	rd_out_str(o, "]]></script>\n</svg>\n");
}
