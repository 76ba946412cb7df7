// The timeline, built from the JSON document above with textContent only: no thread text is
// ever parsed as HTML. Iteration groups get their events only when they scroll near the view.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("thread-data").textContent);
  const events = data.events;
  const LONG_CHARS = 1200;
  const LONG_LINES = 24;

  const answerOf = new Map(); // call index -> its link
  const answerTo = new Map(); // answering event index -> call index
  const strays = new Set();
  const askAnswer = new Map();
  const askedBy = new Map();
  const tokens = new Map((data.tokens || []).map(([iteration, count]) => [iteration, count]));
  linkAll(data.links);

  /** Adds links (all of a page's, or those a live update brings) to the lookups above. */
  function linkAll(links) {
    for (const link of links.calls) {
      answerOf.set(link.call, link);
      if (link.status === "answered") answerTo.set(link.by, link.call);
    }
    for (const stray of links.strays) strays.add(stray);
    for (const ask of links.asks) {
      if (ask.answer !== null) {
        askAnswer.set(ask.request, ask.answer);
        askedBy.set(ask.answer, ask.request);
      }
    }
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- grouping ------------------------------------------------------------------------

  /** Consecutive events of one iteration form a group. */
  function groupsOf(indices) {
    const groups = [];
    let current = null;
    for (const index of indices) {
      const iteration = events[index].iteration;
      if (!current || current.iteration !== iteration) {
        current = { iteration, events: [], folds: new Map() };
        groups.push(current);
      }
      current.events.push(index);
    }
    return groups;
  }

  /**
   * Which iterations a summary replaces: a rolling round's covers the range its marker names
   * (its summarizedIterations is [first, last]); any other summary, the iterations it lists.
   */
  function replacedBy(event) {
    const marker = event.compaction;
    if (marker && marker.strategy === "rolling" && Array.isArray(marker.iterations)) {
      const [first, last] = marker.iterations;
      return { has: (iteration) => iteration >= first && iteration <= last, label: first + " to " + last };
    }
    const listed = Array.isArray(event.summarizedIterations) ? event.summarizedIterations : [];
    const set = new Set(listed);
    return { has: (iteration) => set.has(iteration), label: listed.join(", ") };
  }

  /** Moves the groups a summary replaces under that summary; returns what stays on top. */
  function foldSummarized(groups) {
    const top = [];
    for (const group of groups) {
      for (const index of group.events) {
        const event = events[index];
        if (event.type !== "summary" || !Array.isArray(event.summarizedIterations)) continue;
        const replaced = replacedBy(event);
        const folded = [];
        for (let i = top.length - 1; i >= 0; i--) {
          if (replaced.has(top[i].iteration)) folded.unshift(top.splice(i, 1)[0]);
        }
        group.folds.set(index, folded);
      }
      top.push(group);
    }
    return top;
  }

  // ---- bodies --------------------------------------------------------------------------

  function prettyText(value) {
    if (typeof value !== "string") return JSON.stringify(value, null, 2);
    const start = value.trimStart()[0];
    if (start === "{" || start === "[") {
      try {
        return JSON.stringify(JSON.parse(value), null, 2);
      } catch (_) {
        // Not JSON after all: shown as written.
      }
    }
    return value;
  }

  function sizeLabel(text) {
    const bytes = new TextEncoder().encode(text).length;
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / 1024 / 1024).toFixed(1) + " MB";
  }

  /** A body; long ones show their start and size, the rest on demand. */
  function body(value) {
    const text = prettyText(value);
    let lines = 1;
    for (let i = text.indexOf("\n"); i !== -1 && lines <= LONG_LINES; i = text.indexOf("\n", i + 1)) lines++;
    if (text.length <= LONG_CHARS && lines <= LONG_LINES) return el("pre", "body", text);
    const wrap = el("div", "long");
    const head = text.split("\n").slice(0, 8).join("\n").slice(0, 600);
    wrap.append(el("pre", "body preview", head + " …"));
    const details = el("details");
    const totalLines = text.split("\n").length;
    details.append(el("summary", null, "Show all (" + sizeLabel(text) + ", " + totalLines + " lines)"));
    details.addEventListener("toggle", () => {
      if (details.open && details.childElementCount === 1) details.append(el("pre", "body", text));
    });
    wrap.append(details);
    return wrap;
  }

  const MEDIA_KINDS = new Set(["image", "file", "audio"]);

  /**
   * A media part named, never shown: kind, media type, blob id (or URL), size and an image's
   * dimensions, e.g. "image · image/png · 1280×800 · 48213 bytes · sha256:…".
   */
  function mediaLabel(part) {
    const bits = [String(part.type), String(part.mediaType || "type unknown")];
    if (typeof part.filename === "string") bits.push(part.filename);
    if (typeof part.width === "number" && typeof part.height === "number") bits.push(part.width + "×" + part.height);
    if (typeof part.size === "number") bits.push(part.size + " bytes");
    if (typeof part.blob === "string") bits.push(part.blob);
    else if (typeof part.url === "string") bits.push(part.url);
    return bits.join(" · ");
  }

  /** A message's or tool result's content: a string as a body, parts one after another. */
  function contentNode(value) {
    if (!Array.isArray(value)) return body(value);
    const wrap = el("div", "parts");
    for (const part of value) {
      if (part && MEDIA_KINDS.has(part.type)) wrap.append(el("div", "media", mediaLabel(part)));
      else if (part && typeof part.text === "string") wrap.append(body(part.text));
      else wrap.append(body(part));
    }
    return wrap;
  }

  /** A tool result: its result, then its content parts, whichever it has. */
  function resultNodes(event) {
    const nodes = [];
    if (event.result !== undefined || !Array.isArray(event.content)) nodes.push(body(event.result));
    if (Array.isArray(event.content)) nodes.push(contentNode(event.content));
    return nodes;
  }

  function timeLabel(timestamp) {
    if (typeof timestamp !== "number" || !isFinite(timestamp)) return "";
    const date = new Date(timestamp);
    return isNaN(date.getTime()) ? "" : date.toISOString().replace("T", " ").replace("Z", " UTC");
  }

  // ---- events --------------------------------------------------------------------------

  function card(index, kind, badge) {
    const event = events[index];
    const node = el("article", "event " + kind);
    node.dataset.index = String(index);
    const head = el("div", "event-head");
    head.append(el("span", "badge", badge));
    const time = timeLabel(event.timestamp);
    head.append(el("span", "meta", "#" + index + (time ? " · " + time : "")));
    node.append(head);
    return node;
  }

  function answerPane(callIndex) {
    const link = answerOf.get(callIndex);
    if (!link || link.status !== "answered") {
      const pane = el("div", "answer unanswered");
      pane.append(el("span", "badge", "unanswered"));
      const reason = link ? link.reason : "no result was recorded for this call";
      pane.append(
        el(
          "p",
          "note",
          data.options.danglingToolCalls === "drop"
            ? "Left out of the model input (" + reason + ")."
            : "Repaired in the model input: [Tool call not completed]: " + reason
        )
      );
      return pane;
    }
    const answer = events[link.by];
    const pane = el("div", "answer");
    if (answer.type === "tool_result") {
      pane.append(el("span", "badge", "result #" + link.by));
      pane.append(...resultNodes(answer));
    } else if (answer.type === "error") {
      pane.classList.add(answer.recoverable ? "error" : "error fatal");
      pane.append(el("span", "badge", (answer.recoverable ? "error" : "non-recoverable error") + " #" + link.by));
      pane.append(body(answer.error));
    } else {
      pane.append(el("span", "badge", "human answer #" + link.by));
      pane.append(body(answer.response));
    }
    if (events[link.by].iteration !== events[callIndex].iteration) {
      pane.append(el("p", "note", "recorded in iteration " + events[link.by].iteration));
    }
    return pane;
  }

  function eventNode(index, group) {
    const event = events[index];
    switch (event.type) {
      case "message": {
        const node = card(index, "message role-" + String(event.role), String(event.role));
        node.append(contentNode(event.content));
        return node;
      }
      case "tool_call": {
        const node = card(index, "tool-call", "tool call");
        const pair = el("div", "pair");
        const call = el("div", "call");
        call.append(el("div", "tool-name", String(event.toolName) + "  ·  " + String(event.toolCallId)));
        call.append(body(event.args));
        pair.append(call, answerPane(index));
        node.append(pair);
        return node;
      }
      case "tool_result": {
        const badge = strays.has(index) ? "stray result" : "result";
        const node = card(index, "tool-result" + (strays.has(index) ? " stray" : ""), badge);
        node.append(el("div", "tool-name", "for call " + String(event.toolCallId) + pairedNote(index)));
        node.append(...resultNodes(event));
        return node;
      }
      case "error": {
        const fatal = event.recoverable !== true;
        const node = card(index, "error" + (fatal ? " fatal" : ""), fatal ? "non-recoverable error" : "error");
        if (event.toolCallId !== undefined) {
          node.append(el("div", "tool-name", "call " + String(event.toolCallId) + pairedNote(index)));
        }
        node.append(body(event.error));
        return node;
      }
      case "human_input_requested": {
        const node = card(index, "ask", "human input requested");
        node.append(body(event.question));
        if (Array.isArray(event.choices)) node.append(el("p", "note", "choices: " + event.choices.join(" · ")));
        for (const key of ["context", "urgency", "format"]) {
          if (typeof event[key] === "string") node.append(el("p", "note", key + ": " + event[key]));
        }
        const answer = askAnswer.get(index);
        const pane = el("div", answer === undefined ? "answer unanswered" : "answer");
        if (answer === undefined) {
          pane.append(el("span", "badge", "no answer recorded"));
        } else {
          pane.append(el("span", "badge", "answer #" + answer));
          pane.append(body(events[answer].response));
        }
        node.append(pane);
        return node;
      }
      case "human_input_received": {
        const node = card(index, "answer-event", "human input received");
        node.append(body(event.response));
        return node;
      }
      case "completion": {
        const node = card(index, "completion", event.verified ? "completion · verified" : "completion · unverified");
        node.append(body(event.result));
        return node;
      }
      case "summary": {
        const node = card(index, "summary", "summary of iterations " + replacedBy(event).label);
        node.append(body(event.summary));
        const folded = group.folds.get(index) || [];
        if (folded.length > 0) {
          const details = el("details", "folded");
          const count = folded.reduce((sum, g) => sum + g.events.length, 0);
          details.append(el("summary", null, folded.length + " replaced iteration group(s), " + count + " events"));
          details.addEventListener("toggle", () => {
            if (!details.open || details.childElementCount > 1) return;
            for (const inner of folded) details.append(groupNode(inner));
          });
          node.append(details);
        }
        return node;
      }
      default: {
        const node = card(index, "other", String(event.type));
        node.append(body(event));
        return node;
      }
    }
  }

  function pairedNote(index) {
    const call = answerTo.get(index);
    return call === undefined ? "" : "  (shown beside call #" + call + ")";
  }

  /** An answer sits beside its call; it is not repeated when both are in the same group. */
  function shownBesideItsCall(index, group) {
    const call = answerTo.has(index) ? answerTo.get(index) : askedBy.get(index);
    return call !== undefined && group.events.includes(call);
  }

  // ---- groups, lazily ------------------------------------------------------------------

  const waiting = new Map(); // group body element -> group
  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        const group = waiting.get(entry.target);
        if (!group) continue;
        waiting.delete(entry.target);
        observer.unobserve(entry.target);
        fill(entry.target, group);
      }
    },
    { rootMargin: "1200px 0px" }
  );

  function fill(container, group) {
    for (const index of group.visible || group.events) {
      if (!shownBesideItsCall(index, group)) container.append(eventNode(index, group));
    }
    container.style.minHeight = "";
    container.classList.remove("pending");
  }

  function groupHead(group) {
    const head = el("h2", "group-head");
    head.append(el("span", "iteration", "Iteration " + group.iteration));
    const shown = (group.visible || group.events).length;
    head.append(el("span", "meta", shown + (shown === 1 ? " event" : " events")));
    if (tokens.has(group.iteration)) {
      head.append(el("span", "meta tokens", "≈ " + tokens.get(group.iteration).toLocaleString("en") + " tokens"));
    }
    return head;
  }

  function groupNode(group) {
    const section = el("section", "group");
    section.tabIndex = 0;
    section.dataset.iteration = String(group.iteration);
    const shown = (group.visible || group.events).length;
    section.append(groupHead(group));
    group.section = section;
    const container = el("div", "group-body pending");
    container.style.minHeight = Math.min(shown * 64, 2400) + "px";
    section.append(container);
    waiting.set(container, group);
    observer.observe(container);
    return section;
  }

  // ---- search and the whole timeline ---------------------------------------------------

  const timeline = document.getElementById("timeline");
  const stats = document.getElementById("stats");
  let haystacks = null;
  let shownGroups = []; // the top-level groups of the timeline, in order
  let shownQuery = "";

  function haystack(index) {
    if (!haystacks) haystacks = new Array(events.length);
    let text = haystacks[index];
    if (text === undefined) text = haystacks[index] = JSON.stringify(events[index]).toLowerCase();
    return text;
  }

  function matches(index, query) {
    if (haystack(index).includes(query)) return true;
    // A call is found by its answer's text too, since the two are shown as one.
    const link = answerOf.get(index);
    return link !== undefined && link.status === "answered" && haystack(link.by).includes(query);
  }

  function show(query) {
    for (const container of waiting.keys()) observer.unobserve(container);
    waiting.clear();
    let groups;
    let shownEvents = events.length;
    if (query === "") {
      groups = foldSummarized(groupsOf(events.keys()));
    } else {
      const found = [];
      for (let i = 0; i < events.length; i++) if (matches(i, query)) found.push(i);
      shownEvents = found.length;
      groups = groupsOf(found);
    }
    const fragment = document.createDocumentFragment();
    for (const group of groups) fragment.append(groupNode(group));
    timeline.replaceChildren(fragment);
    shownGroups = groups;
    shownQuery = query;
    showStats(shownEvents);
  }

  function showStats(shownEvents) {
    const groups = shownGroups.length;
    timeline.dataset.groups = String(groups);
    timeline.dataset.events = String(shownEvents);
    const iterations = new Set(events.map((e) => e.iteration)).size;
    stats.textContent =
      shownQuery === ""
        ? iterations + " iterations · " + events.length + " events · " + groups + " groups shown"
        : shownEvents + " of " + events.length + " events match · " + groups + " groups";
  }

  const search = document.getElementById("search");
  let searchTimer = 0;
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => show(search.value.trim().toLowerCase()), 120);
  });

  // ---- model input ---------------------------------------------------------------------

  const model = document.getElementById("model");
  const modelText = document.getElementById("model-text");
  const tabs = Array.from(document.querySelectorAll(".tabs button"));
  document.getElementById("model-options").textContent =
    "Rendered with contextMode " +
    data.options.contextMode +
    " · escape " +
    data.options.escape +
    " · danglingToolCalls " +
    data.options.danglingToolCalls;

  let currentView = "timeline";

  function selectView(view) {
    currentView = view;
    for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.dataset.view === view));
    timeline.hidden = view !== "timeline";
    search.disabled = view !== "timeline";
    model.hidden = view === "timeline";
    if (view === "xml") modelText.textContent = data.xml;
    if (view === "messages") modelText.textContent = JSON.stringify(data.messages, null, 2);
  }
  for (const tab of tabs) tab.addEventListener("click", () => selectView(tab.dataset.view));

  // ---- keyboard ------------------------------------------------------------------------

  function moveFocus(step) {
    const groups = Array.from(timeline.children);
    if (groups.length === 0) return;
    const current = groups.indexOf(document.activeElement.closest ? document.activeElement.closest(".group") : null);
    const next = current === -1 ? (step > 0 ? 0 : groups.length - 1) : current + step;
    if (next < 0 || next >= groups.length) return;
    groups[next].focus();
    groups[next].scrollIntoView({ block: "start" });
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target === search) {
      if (event.key === "Escape") {
        search.value = "";
        show("");
        search.blur();
      }
      return;
    }
    if (event.key === "/") {
      event.preventDefault();
      selectView("timeline");
      search.focus();
    } else if (event.key === "j") {
      moveFocus(1);
    } else if (event.key === "k") {
      moveFocus(-1);
    }
  });

  document.getElementById("title").textContent = data.title;
  show("");
  if (data.live) followLive(data.live);

  // ---- live: a page served by `threadkeeper view --serve` ------------------------------
  // The server's feed sends the events appended since the page was built, with the links and
  // estimates they change. They join the timeline where they belong; the reader's scroll
  // position and search stay, and a reader at the bottom follows the newest events.

  function followLive(live) {
    const badge = el("a", "live-badge", "live");
    badge.href = live.list;
    badge.title = "Updates as the thread grows · all threads";
    stats.after(badge);
    let modelFresh = true;
    const source = new EventSource(live.feed + "&from=" + events.length);
    source.onopen = () => {
      badge.textContent = "live";
      badge.classList.remove("off");
    };
    source.onerror = () => {
      badge.textContent = "reconnecting";
      badge.classList.add("off");
    };
    source.onmessage = (message) => {
      const update = JSON.parse(message.data);
      if (update.type === "append") {
        if (update.from !== events.length) return location.reload();
        append(update);
        modelFresh = false;
        if (currentView !== "timeline") refreshModel();
      } else if (update.type === "reset") {
        source.close();
        location.reload(); // events the page shows were taken back (a pop): start anew
      } else if (update.type === "deleted") {
        source.close();
        badge.textContent = "deleted";
        badge.classList.add("off");
      }
    };
    for (const tab of tabs) {
      tab.addEventListener("click", () => {
        if (!modelFresh && tab.dataset.view !== "timeline") refreshModel();
      });
    }

    /** The model input as it is now; shown when it arrives, if its view is still open. */
    function refreshModel() {
      modelFresh = true;
      fetch(live.model, { cache: "no-store" })
        .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
        .then((model) => {
          data.xml = model.xml;
          data.messages = model.messages;
          if (currentView !== "timeline") selectView(currentView);
        })
        .catch(() => {
          modelFresh = false;
        });
    }
  }

  function append(update) {
    const from = events.length;
    const page = document.scrollingElement;
    const atBottom = page.scrollTop + innerHeight >= page.scrollHeight - 40;
    for (const event of update.events) events.push(event);
    linkAll(update.links);
    for (const [iteration, count] of update.tokens) tokens.set(iteration, count);
    const added = [];
    for (let i = from; i < events.length; i++) added.push(i);
    if (added.some((i) => events[i].type === "summary")) {
      show(shownQuery); // a summary folds earlier groups: lay the timeline out again
    } else {
      const query = shownQuery;
      let shownEvents = Number(timeline.dataset.events);
      const matching = query === "" ? added : added.filter((i) => matches(i, query));
      shownEvents += matching.length;
      for (const index of added) refreshCallOf(index);
      const groups = groupsOf(matching);
      const last = shownGroups[shownGroups.length - 1];
      if (groups.length > 0 && last && last.iteration === groups[0].iteration && !last.visible) {
        extendGroup(last, groups.shift().events);
      }
      for (const group of groups) {
        timeline.append(groupNode(group));
        shownGroups.push(group);
        if (atBottom) fillNow(group); // drawn at once: the reader follows them
      }
      for (const [iteration] of update.tokens) refreshHeads(iteration);
      showStats(shownEvents);
    }
    if (atBottom && currentView === "timeline") page.scrollTop = page.scrollHeight;
  }

  function fillNow(group) {
    const container = group.section.querySelector(".group-body");
    if (!waiting.has(container)) return;
    waiting.delete(container);
    observer.unobserve(container);
    fill(container, group);
  }

  /** More events for the last group: drawn now if it is on screen already, else when it is. */
  function extendGroup(group, indices) {
    for (const index of indices) group.events.push(index);
    const container = group.section.querySelector(".group-body");
    if (!waiting.has(container)) {
      for (const index of indices) {
        if (!shownBesideItsCall(index, group)) container.append(eventNode(index, group));
      }
    }
  }

  /** A call shown earlier whose answer just came: drawn again, with its answer beside it. */
  function refreshCallOf(index) {
    const call = answerTo.has(index) ? answerTo.get(index) : askedBy.get(index);
    if (call === undefined) return;
    for (const node of timeline.querySelectorAll('article[data-index="' + call + '"]')) {
      node.replaceWith(eventNode(call, { folds: new Map() }));
    }
  }

  function refreshHeads(iteration) {
    for (const group of shownGroups) {
      if (group.iteration === iteration && group.section) group.section.firstChild.replaceWith(groupHead(group));
    }
  }
})();
