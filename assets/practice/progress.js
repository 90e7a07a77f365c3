// The practice page's progress, kept in this browser (localStorage): which exercises passed and how many
// runs failed before (each failed run opens one more hint). Python holds the session's copy and sends it
// after every verdict; a fresh session (a reload, another replica) gets the browser's copy back, once.

const KEY = "gdn.practice.progress";

export function merged(kept, sent) {
  const out = { ...kept };
  for (const [exercise, p] of Object.entries(sent || {})) {
    const before = out[exercise] || { passed: false, fails: 0 };
    out[exercise] = { passed: Boolean(before.passed || p.passed), fails: Math.max(before.fails || 0, p.fails || 0) };
  }
  return out;
}

function read(storage) {
  try {
    const kept = JSON.parse(storage.getItem(KEY) || "{}");
    return kept && typeof kept === "object" && !Array.isArray(kept) ? kept : {};
  } catch {
    return {};
  }
}

// The same progress whatever order its exercises were added in.
const canonical = (p) => JSON.stringify(Object.keys(p).sort().map((k) => [k, p[k].passed, p[k].fails]));

export default function ({ data, setStateValue }) {
  const storage = window.localStorage;
  const all = merged(read(storage), data.progress);
  storage.setItem(KEY, JSON.stringify(all));
  if (canonical(all) !== canonical(merged({}, data.progress))) setStateValue("progress", all);
}
