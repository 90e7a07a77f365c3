// A student's side of follow-me (app_pages/_follow.py): data.navigate, the teacher's page or example to load
// afresh; else data is follow-me's position message {seq, params} (assets/common/view.js, followTo), and the
// views of this page move there in the browser.
export default function ({ data }) {
  if (data.navigate) {
    const t = tab();
    if (t.navigating !== data.navigate) {          // once per address: every poll repeats it until the load
      t.navigating = data.navigate;
      window.location.assign(new URL(data.navigate, window.location.href).href);
    }
    return;
  }
  followTo({ seq: data.seq, params: data.params });
}
