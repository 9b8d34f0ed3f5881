// ragproxy's insights page (/admin/): the admin API's report of what visitors asked, drawn as tables and the
// server's SVG chart, and FAQ entries made from the gaps. Everything shown is text the visitors or the site
// wrote, so it goes in as textContent only; the admin key stays in this tab's sessionStorage.
'use strict';
(() => {
  const KEY_STORE = 'ragproxy-admin-key';
  const $ = (id) => document.getElementById(id);
  const state = { page: 1 };

  function storedKey() {
    try { return sessionStorage.getItem(KEY_STORE) || ''; } catch { return ''; }
  }
  function storeKey(v) {
    try { v ? sessionStorage.setItem(KEY_STORE, v) : sessionStorage.removeItem(KEY_STORE); } catch { /* private mode */ }
  }

  class Refused extends Error {}

  // api calls the admin API with the key; a refused key shows the key form again.
  async function api(method, path, body) {
    const headers = { Authorization: 'Bearer ' + storedKey() };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status === 401) {
      storeKey('');
      showKeyForm('That key was refused: give an admin key.');
      throw new Refused('refused');
    }
    if (!res.ok) {
      let msg = res.status + ' ' + res.statusText;
      try { msg = (await res.json()).error.message; } catch { /* not an error body */ }
      throw new Error(msg);
    }
    return (res.headers.get('Content-Type') || '').includes('json') ? res.json() : res.text();
  }

  function showKeyForm(message) {
    $('report').hidden = true;
    $('key-form').hidden = false;
    $('key-error').textContent = message || '';
    $('admin-key').focus();
  }

  function showError(err) {
    if (err instanceof Refused) return;
    $('error').hidden = false;
    $('error').textContent = 'The insights could not be read: ' + err.message;
  }

  // row appends a table row of cells (strings or elements).
  function row(tbody, cells, className) {
    const tr = document.createElement('tr');
    if (className) tr.className = className;
    for (const c of cells) {
      const td = document.createElement(className === 'topic' ? 'th' : 'td');
      if (c instanceof Node) td.appendChild(c);
      else {
        td.textContent = String(c);
        if (typeof c === 'number') td.className = 'n';
      }
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
    return tr;
  }

  function clear(id) {
    const tbody = $(id).tBodies[0];
    tbody.replaceChildren();
    return tbody;
  }

  function link(url) {
    const a = document.createElement('a');
    a.textContent = url;
    if (/^https?:\/\//i.test(url)) a.href = url;
    a.rel = 'noopener noreferrer';
    return a;
  }

  // promoteButton fills the FAQ form with a question, for the operator to write its answer.
  function promoteButton(question) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'promote';
    b.textContent = 'Make an FAQ entry';
    b.addEventListener('click', () => {
      $('faq-question').value = question;
      $('faq-answer').focus();
      $('faq-form').scrollIntoView({ block: 'center' });
    });
    return b;
  }

  const pct = (x) => (100 * x).toFixed(1) + '%';

  function query() {
    const p = new URLSearchParams({ since: $('since').value });
    const a = $('assistant').value.trim();
    if (a) p.set('assistant', a);
    return p;
  }

  async function load() {
    $('error').hidden = true;
    const q = query();
    const r = await api('GET', '/admin/insights?' + q);
    $('key-form').hidden = true;
    $('report').hidden = false;
    $('period').textContent = r.from + ' to ' + r.to;
    const t = r.totals;
    const totals = [['questions', t.questions], ['answered', t.answered + ' (' + pct(t.answered_share) + ')'],
      ['unanswered', t.unanswered + ' (' + pct(t.unanswered_share) + ')'], ['FAQ', t.faq + ' (' + pct(t.faq_share) + ')'],
      ['low confidence', t.low_confidence], ['thumbs up / down', t.thumbs_up + ' / ' + t.thumbs_down],
      ['latency p50 / p95', Math.round(t.latency_p50_ms) + ' / ' + Math.round(t.latency_p95_ms) + ' ms'],
      ['tokens in / out', t.prompt_tokens + ' / ' + t.completion_tokens], ['cost', '$' + t.cost_usd.toFixed(4)]];
    const dl = $('totals');
    dl.replaceChildren();
    for (const [name, value] of totals) {
      const div = document.createElement('div');
      const dt = document.createElement('dt');
      const dd = document.createElement('dd');
      dt.textContent = name;
      dd.textContent = String(value);
      dd.dataset.total = name;
      div.append(dt, dd);
      dl.appendChild(div);
    }
    // The chart is the server's SVG, shown as an image (an image runs no script), from a data: URL since the
    // request needs the key.
    const svg = await api('GET', '/admin/insights/chart.svg?' + q);
    $('chart').src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg);

    let tb = clear('proposals');
    const proposed = [];
    const missed = (g) => g.unanswered + g.low_confidence;
    for (const topic of r.gaps) for (const g of topic.questions) if (missed(g) >= 2) proposed.push(g);
    proposed.sort((a, b) => missed(b) - missed(a));
    for (const g of proposed) row(tb, [g.count, g.question, g.topic || '', promoteButton(g.question)]);
    if (!proposed.length) row(tb, ['', 'None yet.', '', '']);

    tb = clear('gaps');
    for (const topic of r.gaps) {
      row(tb, [topic.count, topic.topic, '', '', ''], 'topic');
      for (const g of topic.questions) row(tb, [g.count, g.question, g.unanswered, g.low_confidence, promoteButton(g.question)]);
    }
    tb = clear('top');
    for (const g of r.top_questions) row(tb, [g.count, g.question, g.topic || '']);
    tb = clear('downvoted');
    for (const c of r.downvoted) row(tb, [new Date(c.at).toLocaleString(), c.question, c.comment]);
    tb = clear('cited');
    for (const c of r.cited_pages) row(tb, [c.count, link(c.url)]);
    $('never-summary').textContent = 'Pages never cited (' + r.never_cited.length + ')';
    $('never').replaceChildren(...r.never_cited.map((u) => { const li = document.createElement('li'); li.appendChild(link(u)); return li; }));
    await Promise.all([loadQuestions(), loadFAQ()]);
  }

  async function loadQuestions() {
    const q = query();
    q.set('page', String(state.page));
    q.set('per_page', '25');
    if ($('outcome').value) q.set('outcome', $('outcome').value);
    const l = await api('GET', '/admin/insights/questions?' + q);
    const tb = clear('questions');
    for (const x of l.data) {
      row(tb, [new Date(x.at).toLocaleString(), x.model, x.standalone ? x.question + ' (' + x.standalone + ')' : x.question,
        x.outcome, x.confidence.toFixed(2)]);
    }
    $('page-info').textContent = 'page ' + l.page + ', ' + l.total + ' questions';
    $('prev').disabled = l.page <= 1;
    $('next').disabled = !l.has_more;
  }

  async function loadFAQ() {
    const l = await api('GET', '/admin/faq');
    const tb = clear('faq');
    for (const e of l.data) {
      const del = document.createElement('button');
      del.type = 'button';
      del.textContent = 'Delete';
      del.addEventListener('click', () => api('DELETE', '/admin/faq/' + e.id).then(loadFAQ).catch(showError));
      row(tb, [e.question, e.answer, link(e.url), e.lang || '', del]);
    }
  }

  $('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const k = $('admin-key').value.trim();
    if (!k) return;
    storeKey(k);
    $('admin-key').value = '';
    load().catch(showError);
  });
  $('filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.page = 1;
    load().catch(showError);
  });
  $('forget-key').addEventListener('click', () => { storeKey(''); showKeyForm(''); });
  $('outcome').addEventListener('change', () => { state.page = 1; loadQuestions().catch(showError); });
  $('prev').addEventListener('click', () => { state.page = Math.max(1, state.page - 1); loadQuestions().catch(showError); });
  $('next').addEventListener('click', () => { state.page++; loadQuestions().catch(showError); });
  $('faq-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const entry = { question: $('faq-question').value.trim(), answer: $('faq-answer').value.trim(), url: $('faq-url').value.trim() };
    const lang = $('faq-lang').value.trim();
    if (lang) entry.lang = lang;
    api('POST', '/admin/faq', entry).then(() => {
      $('faq-status').textContent = 'Added: visitors asking this get the answer from now on.';
      $('faq-form').reset();
      return loadFAQ();
    }).catch((err) => { $('faq-status').textContent = 'Not added: ' + err.message; });
  });

  if (storedKey()) load().catch(showError);
  else showKeyForm('');
})();
