// The thread list, kept current by the server's feed; every value is set as text, never as HTML.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("list-data").textContent);
  const rows = document.getElementById("rows");
  const stats = document.getElementById("stats");
  const empty = document.getElementById("empty");
  const filter = document.getElementById("filter");
  const live = document.getElementById("live");
  let threads = data.threads;
  let versions = new Map(threads.map((t) => [t.id, t.version]));

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function timeLabel(ms) {
    const date = new Date(ms);
    if (isNaN(date.getTime())) return "";
    const seconds = Math.round((Date.now() - ms) / 1000);
    const ago = seconds < 60 ? seconds + " s ago" : seconds < 3600 ? Math.round(seconds / 60) + " min ago" : "";
    return ago || date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
  }

  function threadHref(id) {
    return "thread/" + encodeURIComponent(id) + "?token=" + encodeURIComponent(data.token);
  }

  function render(changed) {
    const query = filter.value.trim().toLowerCase();
    const shown = threads.filter((t) => t.id.toLowerCase().includes(query));
    const fragment = document.createDocumentFragment();
    for (const thread of shown) {
      const row = el("tr");
      row.dataset.id = thread.id;
      if (changed.has(thread.id)) row.className = "fresh";
      const name = el("td");
      const link = el("a", null, thread.id);
      link.href = threadHref(thread.id);
      name.append(link);
      const time = el("td", "time", timeLabel(thread.updatedAt));
      time.title = new Date(thread.updatedAt).toISOString();
      row.append(name, time, el("td", "count", String(thread.eventCount)), el("td", "last", thread.last));
      row.lastChild.title = thread.last;
      fragment.append(row);
    }
    rows.replaceChildren(fragment);
    empty.hidden = threads.length > 0;
    stats.textContent =
      query === "" ? threads.length + " threads" : shown.length + " of " + threads.length + " threads match";
    if (changed.size > 0) setTimeout(() => rows.querySelectorAll("tr.fresh").forEach((r) => r.classList.remove("fresh")), 50);
  }

  filter.addEventListener("input", () => render(new Set()));
  document.addEventListener("keydown", (event) => {
    if (event.key === "/" && event.target !== filter) {
      event.preventDefault();
      filter.focus();
    } else if (event.key === "Escape" && event.target === filter) {
      filter.value = "";
      render(new Set());
    }
  });

  const feed = new EventSource(data.feed);
  feed.onopen = () => {
    live.textContent = "live";
    live.classList.remove("off");
  };
  feed.onerror = () => {
    live.textContent = "reconnecting";
    live.classList.add("off");
  };
  feed.onmessage = (message) => {
    const next = JSON.parse(message.data).threads;
    const changed = new Set(next.filter((t) => versions.get(t.id) !== t.version).map((t) => t.id));
    threads = next;
    versions = new Map(threads.map((t) => [t.id, t.version]));
    render(changed);
  };
  setInterval(() => render(new Set()), 30000); // keeps "s ago" honest
  render(new Set());
})();
