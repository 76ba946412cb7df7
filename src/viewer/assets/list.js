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
    if (event.key === "/" && event.target !== filter && event.target !== search) {
      event.preventDefault();
      filter.focus();
    } else if (event.key === "s" && event.target !== filter && event.target !== search) {
      event.preventDefault();
      search.focus();
    } else if (event.key === "Escape" && event.target === filter) {
      filter.value = "";
      render(new Set());
    } else if (event.key === "Escape" && event.target === search) {
      search.value = "";
      findNow();
    }
  });

  // ---- search: every thread's events, by the store's index (thread/search) ---------------
  // Hits come as JSON; a snippet's matches (between « and ») become <mark> elements and the
  // rest text, so nothing in a thread becomes markup. A hit opens its thread at the event.

  const search = document.getElementById("search");
  const hits = document.getElementById("hits");
  const hitList = document.getElementById("hit-list");
  const hitStats = document.getElementById("hits-stats");
  let searchTimer = 0;
  let asked = 0; // answers to older questions are dropped

  function snippetNode(snippet) {
    const node = el("span", "snippet");
    let marked = false;
    for (const piece of String(snippet).split(/([«»])/)) {
      if (piece === "«") marked = true;
      else if (piece === "»") marked = false;
      else if (piece !== "") node.append(marked ? el("mark", null, piece) : document.createTextNode(piece));
    }
    return node;
  }

  function hitNode(hit) {
    const item = el("li", "hit");
    const link = el("a", "hit-link");
    link.href = threadHref(hit.threadId) + "#event-" + hit.eventIndex;
    link.append(el("span", "hit-thread", hit.threadId));
    const kind = hit.type + (hit.role ? " " + hit.role : "");
    link.append(el("span", "hit-meta", " #" + hit.eventIndex + " · " + kind + " · iteration " + hit.iteration));
    item.append(link, snippetNode(hit.snippet));
    return item;
  }

  function showHits(query, answer) {
    hits.hidden = false;
    if (answer.error !== undefined) {
      hits.classList.add("failed");
      hitStats.textContent = String(answer.error);
      hitList.replaceChildren();
      return;
    }
    hits.classList.remove("failed");
    const list = Array.isArray(answer.hits) ? answer.hits : [];
    hitStats.textContent =
      list.length === 0 ? "No event matches " + query : list.length + (list.length === 1 ? " hit" : " hits") + " for " + query;
    const fragment = document.createDocumentFragment();
    for (const hit of list) fragment.append(hitNode(hit));
    hitList.replaceChildren(fragment);
  }

  function findNow() {
    clearTimeout(searchTimer);
    const query = search.value.trim();
    const mine = ++asked;
    if (query === "") {
      hits.hidden = true;
      hitList.replaceChildren();
      return;
    }
    fetch(data.search + "&q=" + encodeURIComponent(query), { cache: "no-store" })
      .then((response) =>
        response.headers.get("content-type") === "application/json"
          ? response.json()
          : response.text().then((text) => ({ error: text.trim() || "the server answered " + response.status }))
      )
      .catch((error) => ({ error: "the search could not reach the server: " + error }))
      .then((answer) => {
        if (mine === asked) showHits(query, answer);
      });
  }

  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(findNow, 250);
  });
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") findNow();
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
