// Measures the laid-out page for what a reader would not see, and returns
// the problems as a JSON string: [{kind, element, detail}]. Run by
// pagecheck after the page has loaded, in the viewport and media it set.
// Kinds:
//   viewport  an element reaches past the viewport's right edge (the page
//             scrolls sideways, or print cuts it off);
//   container an element sticks out of the box of its parent;
//   spill     an element's own text or inline content is wider than it;
//   clipped   content cut off by overflow:hidden/clip or an ellipsis, or
//             chart text outside its SVG;
//   hidden    a table column (or other content) scrolled out of view
//             inside a sideways-scrolling box;
//   overlap   two block siblings (cards, figures, tables) overlap, or
//             one's spilling content covers the other.
(() => {
  const slop = 1; // px: sub-pixel rounding is not a problem
  const vw = document.documentElement.clientWidth;
  const problems = [];
  const seen = new Set();
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();
  const short = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const px = (v) => Math.round(v) + " px";
  // name is the element's path from <body> (tag.class:nth-of-type) and
  // the start of its text, enough to find it in the page source.
  const name = (el) => {
    const parts = [];
    for (let e = el; e && e !== document.body && e !== document.documentElement; e = e.parentElement) {
      let s = e.tagName.toLowerCase();
      if (e.classList.length) s += "." + [...e.classList].join(".");
      const p = e.parentElement;
      if (p) {
        const same = [...p.children].filter((c) => c.tagName === e.tagName);
        if (same.length > 1) s += ":nth-of-type(" + (same.indexOf(e) + 1) + ")";
      }
      parts.unshift(s);
    }
    const t = short(norm(el.textContent), 70);
    return parts.join(" > ") + (t ? ' "' + t + '"' : "");
  };
  const add = (kind, el, detail) => {
    const key = kind + "\u0000" + name(el);
    if (seen.has(key)) return;
    seen.add(key);
    problems.push({ kind, el, detail });
  };
  const style = (el) => getComputedStyle(el);
  const scrolls = (cs) => cs.overflowX === "auto" || cs.overflowX === "scroll";
  const clips = (cs) => cs.overflowX === "hidden" || cs.overflowX === "clip";
  const inSVG = (el) => el.closest("svg") !== null && el.tagName.toLowerCase() !== "svg";
  const shown = (el, r) => r.width > 0 || r.height > 0;
  // clippedBy is the nearest ancestor that scrolls or clips sideways (its
  // own problem reports what it hides), null when none.
  const clippedBy = (el) => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const cs = style(e);
      if (scrolls(cs) || clips(cs)) return e;
    }
    return null;
  };
  const blockish = new Set(["block", "flex", "grid", "table", "list-item", "flow-root", "inline-block", "inline-flex", "inline-grid", "inline-table"]);

  const all = [...document.body.querySelectorAll("*")];
  for (const el of all) {
    if (inSVG(el)) continue;
    const cs = style(el);
    if (cs.display === "none" || cs.display === "contents") continue;
    const r = el.getBoundingClientRect();
    if (!shown(el, r)) continue;
    const clip = clippedBy(el);
    // viewport: the outermost element past the right edge.
    if (!clip && r.right > vw + slop) {
      const p = el.parentElement;
      if (!p || p === document.body || p.getBoundingClientRect().right <= vw + slop) {
        add("viewport", el, "reaches " + px(r.right) + ", the viewport is " + px(vw) + " wide");
      }
    }
    // container: sticks out of the parent's box (not a scroll box's
    // child: that is the hidden check; not a table cell: tables size
    // their cells).
    const p = el.parentElement;
    if (p && p !== document.body && !clip && cs.position !== "absolute" && cs.position !== "fixed") {
      const pr = p.getBoundingClientRect();
      const tag = el.tagName.toLowerCase();
      if (!["td", "th", "tr", "tbody", "thead", "caption"].includes(tag) && (r.right > pr.right + slop || r.left < pr.left - slop)) {
        add("container", el, px(r.width) + " wide at " + px(r.left) + "–" + px(r.right) + ", its parent " + p.tagName.toLowerCase() + " spans " + px(pr.left) + "–" + px(pr.right));
      }
    }
    // spill and clipped: the element's own content is wider than its box.
    if (blockish.has(cs.display) || cs.display.startsWith("table-")) {
      const over = el.scrollWidth - el.clientWidth;
      if (over > slop && el.clientWidth > 0) {
        if (scrolls(cs)) {
          // hidden: name the first cell that is out of view.
          const box = el.getBoundingClientRect();
          const right = box.left + el.clientLeft + el.clientWidth;
          let named = false;
          for (const cell of el.querySelectorAll("th, td")) {
            const cr = cell.getBoundingClientRect();
            if (cr.right > right + slop) {
              const table = cell.closest("table");
              const head = table && table.rows.length ? table.rows[0].cells[cell.cellIndex] : null;
              const col = head ? short(norm(head.textContent), 60) : "column " + (cell.cellIndex + 1);
              add("hidden", el, "table column " + (cell.cellIndex + 1) + ' "' + col + '" is scrolled out of view (' + px(over) + " of " + px(el.scrollWidth) + " hidden)");
              named = true;
              break;
            }
          }
          if (!named) add("hidden", el, px(over) + " of " + px(el.scrollWidth) + " scrolled out of view");
        } else if (clips(cs) || cs.textOverflow === "ellipsis") {
          add("clipped", el, px(over) + " of " + px(el.scrollWidth) + " cut off");
        } else if (!clip && !["table", "inline-table"].includes(cs.display)) {
          add("spill", el, "content " + px(el.scrollWidth) + " wide in a box of " + px(el.clientWidth));
        }
      }
      if ((clips(cs) || cs.overflowY === "hidden" || cs.overflowY === "clip") && el.scrollHeight - el.clientHeight > slop) {
        add("clipped", el, px(el.scrollHeight - el.clientHeight) + " of its height cut off");
      }
    }
    // overlap: block siblings must not cover each other.
    if (el.children.length > 1) {
      const kids = [...el.children].filter((c) => {
        const ks = style(c);
        const kr = c.getBoundingClientRect();
        return blockish.has(ks.display) && ks.position !== "absolute" && ks.position !== "fixed" && kr.width > 0 && kr.height > 0;
      });
      // A sibling covers what it draws: its box, widened by content
      // that spills out of it (overflow visible).
      const rects = kids.map((c) => {
        const kr = c.getBoundingClientRect();
        const right = style(c).overflowX === "visible" ? Math.max(kr.right, kr.left + c.scrollWidth) : kr.right;
        return { left: kr.left, right, top: kr.top, bottom: kr.bottom };
      });
      for (let i = 0; i < kids.length; i++) {
        for (let j = i + 1; j < kids.length; j++) {
          const a = rects[i], b = rects[j];
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > slop && h > slop) {
            add("overlap", kids[j], "overlaps " + name(kids[i]) + " by " + px(w) + " × " + px(h));
          }
        }
      }
    }
  }
  // Chart text outside its SVG is cut off (an SVG clips to its viewport).
  for (const svg of document.querySelectorAll("svg")) {
    const sr = svg.getBoundingClientRect();
    if (!shown(svg, sr)) continue;
    for (const t of svg.querySelectorAll("text")) {
      const tr = t.getBoundingClientRect();
      if (!shown(t, tr)) continue;
      if (tr.left < sr.left - slop || tr.right > sr.right + slop || tr.top < sr.top - slop || tr.bottom > sr.bottom + slop) {
        add("clipped", t, "chart text at " + px(tr.left) + "–" + px(tr.right) + " × " + px(tr.top) + "–" + px(tr.bottom) + " outside its chart " + px(sr.left) + "–" + px(sr.right) + " × " + px(sr.top) + "–" + px(sr.bottom));
      }
    }
  }
  // One cause, one problem: a box whose content spills because something
  // inside it sticks out is reported at that something; of elements that
  // stick out only the outermost is reported; siblings sticking out the
  // same way are one problem with a count.
  const outward = new Set(["viewport", "container"]);
  const kept = problems.filter((p) => {
    if (p.kind === "spill") return !problems.some((q) => q !== p && p.el.contains(q.el));
    if (outward.has(p.kind) && problems.some((q) => q.kind === p.kind && q.el !== p.el && q.el.contains(p.el))) return false;
    // past the viewport says more than out of its parent
    if (p.kind === "container") return !problems.some((q) => q.kind === "viewport" && q.el === p.el);
    return true;
  });
  const groups = new Map();
  const out = [];
  for (const p of kept) {
    const key = p.kind + "\u0000" + p.el.tagName + "\u0000" + (p.el.parentElement ? name(p.el.parentElement) : "");
    const g = groups.get(key);
    if (g && p.kind !== "overlap" && p.kind !== "hidden") {
      g.more++;
      continue;
    }
    const q = { kind: p.kind, element: name(p.el), detail: p.detail, more: 0 };
    groups.set(key, q);
    out.push(q);
  }
  for (const q of out) {
    if (q.more > 0) q.detail += " (and " + q.more + " more of its siblings)";
    delete q.more;
  }
  return JSON.stringify(out);
})()
