// ragproxy's chat page: sends the conversation to /v1/chat/completions, renders the streamed answer as sanitised
// markdown and lists the pages it cites. Everything an answer contains is untrusted (it quotes crawled pages), so
// it only reaches the DOM through DOMPurify, and the server's CSP stops whatever might slip through.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const root = document.documentElement;
  const body = document.body;
  const authRequired = body.dataset.auth === 'required';
  // Framed by the widget on a site's page (/?embed=1&host=ORIGIN): the host page's origin, when the server lists
  // it (only listed origins can frame the page at all: the CSP's frame-ancestors); null otherwise, and then this
  // is the plain chat page.
  const parentOrigin = (() => {
    if (body.dataset.embed !== '1' || window.parent === window) return null;
    const host = new URLSearchParams(location.search).get('host');
    return host && (body.dataset.embedOrigins || '').split(' ').includes(host) ? host : null;
  })();
  const embedded = parentOrigin !== null;
  // What the widget told of its page: the address and title the questions are asked from, and its key.
  const visitor = { page: null, title: '', key: '' };
  const KEY_STORE = 'ragproxy.key';
  const THEME_STORE = 'ragproxy.theme';
  const ui = {
    messages: $('messages'), greeting: $('greeting'), composer: $('composer'), prompt: $('prompt'),
    send: $('send'), stop: $('stop'), newChat: $('new-chat'), theme: $('theme'), modelPick: $('model-pick'),
    model: $('model'), keyForm: $('key-form'), key: $('api-key'), save: $('save-key'), keyError: $('key-error'),
  };

  // ---- labels in the browser's language (or the one the widget's page names): English unless one of these ----
  const LABELS = {
    de: { newChat: 'Neuer Chat', newChatLabel: 'Neuer Chat: das Gespräch leeren', send: 'Senden', stop: 'Stopp',
      prompt: 'Stellen Sie eine Frage…', question: 'Ihre Frage', conversation: 'Gespräch', skip: 'Zum Fragefeld springen',
      hint: 'Enter sendet, Umschalt+Enter beginnt eine neue Zeile, Esc stoppt eine Antwort. Antworten können falsch sein: prüfen Sie die Quellen.',
      greeting: (site) => `Hallo! Fragen Sie mich alles über ${site}.`,
      lead: 'Ich antworte aus den Seiten der Website selbst und verlinke die Seiten, die ich verwendet habe.',
      sources: 'Quellen', copy: 'Kopieren', copyLabel: 'Diese Antwort kopieren', copied: 'Kopiert', model: 'Modell' },
    fr: { newChat: 'Nouvelle discussion', newChatLabel: 'Nouvelle discussion : effacer la conversation', send: 'Envoyer',
      stop: 'Arrêter', prompt: 'Posez une question…', question: 'Votre question', conversation: 'Conversation',
      skip: 'Aller à la zone de question',
      hint: 'Entrée envoie, Maj+Entrée commence une nouvelle ligne, Échap arrête une réponse. Les réponses peuvent être fausses : vérifiez les sources.',
      greeting: (site) => `Bonjour ! Posez-moi vos questions sur ${site}.`,
      lead: 'Je réponds à partir des pages du site et je donne le lien des pages utilisées.',
      sources: 'Sources', copy: 'Copier', copyLabel: 'Copier cette réponse', copied: 'Copié', model: 'Modèle' },
    es: { newChat: 'Nuevo chat', newChatLabel: 'Nuevo chat: borrar la conversación', send: 'Enviar', stop: 'Detener',
      prompt: 'Haz una pregunta…', question: 'Tu pregunta', conversation: 'Conversación', skip: 'Ir al cuadro de pregunta',
      hint: 'Intro envía, Mayús+Intro empieza una línea nueva, Esc detiene una respuesta. Las respuestas pueden ser erróneas: comprueba las fuentes.',
      greeting: (site) => `¡Hola! Pregúntame lo que quieras sobre ${site}.`,
      lead: 'Respondo con las propias páginas del sitio y enlazo las páginas que he usado.',
      sources: 'Fuentes', copy: 'Copiar', copyLabel: 'Copiar esta respuesta', copied: 'Copiado', model: 'Modelo' },
    it: { newChat: 'Nuova chat', newChatLabel: 'Nuova chat: cancella la conversazione', send: 'Invia', stop: 'Ferma',
      prompt: 'Fai una domanda…', question: 'La tua domanda', conversation: 'Conversazione', skip: 'Vai alla casella della domanda',
      hint: 'Invio invia, Maiusc+Invio va a capo, Esc ferma una risposta. Le risposte possono essere sbagliate: controlla le fonti.',
      greeting: (site) => `Ciao! Chiedimi qualsiasi cosa su ${site}.`,
      lead: 'Rispondo dalle pagine del sito stesso e collego le pagine che ho usato.',
      sources: 'Fonti', copy: 'Copia', copyLabel: 'Copia questa risposta', copied: 'Copiato', model: 'Modello' },
    pt: { newChat: 'Nova conversa', newChatLabel: 'Nova conversa: limpar a conversa', send: 'Enviar', stop: 'Parar',
      prompt: 'Faça uma pergunta…', question: 'Sua pergunta', conversation: 'Conversa', skip: 'Ir para o campo de pergunta',
      hint: 'Enter envia, Shift+Enter começa uma nova linha, Esc interrompe uma resposta. As respostas podem estar erradas: confira as fontes.',
      greeting: (site) => `Olá! Pergunte-me o que quiser sobre ${site}.`,
      lead: 'Respondo com as próprias páginas do site e indico os links das páginas que usei.',
      sources: 'Fontes', copy: 'Copiar', copyLabel: 'Copiar esta resposta', copied: 'Copiado', model: 'Modelo' },
    ru: { newChat: 'Новый чат', newChatLabel: 'Новый чат: очистить разговор', send: 'Отправить', stop: 'Остановить',
      prompt: 'Задайте вопрос…', question: 'Ваш вопрос', conversation: 'Разговор', skip: 'Перейти к полю вопроса',
      hint: 'Enter отправляет, Shift+Enter начинает новую строку, Esc останавливает ответ. Ответы могут быть неверными: проверяйте источники.',
      greeting: (site) => `Здравствуйте! Спросите меня о чём угодно про ${site}.`,
      lead: 'Я отвечаю по страницам самого сайта и даю ссылки на страницы, которыми воспользовался.',
      sources: 'Источники', copy: 'Копировать', copyLabel: 'Скопировать этот ответ', copied: 'Скопировано', model: 'Модель' },
    ja: { newChat: '新しいチャット', newChatLabel: '新しいチャット：会話を消去', send: '送信', stop: '停止',
      prompt: '質問を入力…', question: 'あなたの質問', conversation: '会話', skip: '質問欄へ移動',
      hint: 'Enterで送信、Shift+Enterで改行、Escで回答を停止します。回答は誤っている場合があります。出典を確認してください。',
      greeting: (site) => `こんにちは！${site}について何でも聞いてください。`,
      lead: 'サイト自身のページから回答し、使ったページへのリンクを示します。',
      sources: '出典', copy: 'コピー', copyLabel: 'この回答をコピー', copied: 'コピーしました', model: 'モデル' },
    ca: { newChat: 'Xat nou', newChatLabel: 'Xat nou: esborrar la conversa', send: 'Envia', stop: 'Atura',
      prompt: 'Fes una pregunta…', question: 'La teva pregunta', conversation: 'Conversa', skip: 'Ves al quadre de pregunta',
      hint: 'Retorn envia, Maj+Retorn comença una línia nova, Esc atura una resposta. Les respostes poden ser errònies: comprova les fonts.',
      greeting: (site) => `Hola! Pregunta'm el que vulguis sobre ${site}.`,
      lead: 'Responc a partir de les pàgines del mateix lloc i enllaço les pàgines que he fet servir.',
      sources: 'Fonts', copy: 'Copia', copyLabel: 'Copia aquesta resposta', copied: 'Copiat', model: 'Model' },
    id: { newChat: 'Obrolan baru', newChatLabel: 'Obrolan baru: hapus percakapan', send: 'Kirim', stop: 'Berhenti',
      prompt: 'Ajukan pertanyaan…', question: 'Pertanyaan Anda', conversation: 'Percakapan', skip: 'Lompat ke kolom pertanyaan',
      hint: 'Enter mengirim, Shift+Enter membuat baris baru, Esc menghentikan jawaban. Jawaban bisa saja salah: periksa sumbernya.',
      greeting: (site) => `Halo! Tanyakan apa saja tentang ${site}.`,
      lead: 'Saya menjawab dari halaman situs itu sendiri dan menautkan halaman yang saya gunakan.',
      sources: 'Sumber', copy: 'Salin', copyLabel: 'Salin jawaban ini', copied: 'Disalin', model: 'Model' },
    nl: { newChat: 'Nieuw gesprek', newChatLabel: 'Nieuw gesprek: het gesprek wissen', send: 'Verzenden', stop: 'Stoppen',
      prompt: 'Stel een vraag…', question: 'Uw vraag', conversation: 'Gesprek', skip: 'Naar het vraagveld',
      hint: 'Enter verzendt, Shift+Enter begint een nieuwe regel, Esc stopt een antwoord. Antwoorden kunnen fout zijn: controleer de bronnen.',
      greeting: (site) => `Hallo! Vraag me alles over ${site}.`,
      lead: "Ik antwoord met de pagina's van de site zelf en link naar de pagina's die ik heb gebruikt.",
      sources: 'Bronnen', copy: 'Kopiëren', copyLabel: 'Dit antwoord kopiëren', copied: 'Gekopieerd', model: 'Model' },
    sv: { newChat: 'Ny chatt', newChatLabel: 'Ny chatt: rensa samtalet', send: 'Skicka', stop: 'Stoppa',
      prompt: 'Ställ en fråga…', question: 'Din fråga', conversation: 'Samtal', skip: 'Gå till frågefältet',
      hint: 'Enter skickar, Skift+Enter börjar en ny rad, Esc stoppar ett svar. Svar kan vara fel: kontrollera källorna.',
      greeting: (site) => `Hej! Fråga mig vad du vill om ${site}.`,
      lead: 'Jag svarar utifrån webbplatsens egna sidor och länkar till sidorna jag har använt.',
      sources: 'Källor', copy: 'Kopiera', copyLabel: 'Kopiera det här svaret', copied: 'Kopierat', model: 'Modell' },
    nb: { newChat: 'Ny samtale', newChatLabel: 'Ny samtale: tøm samtalen', send: 'Send', stop: 'Stopp',
      prompt: 'Still et spørsmål…', question: 'Spørsmålet ditt', conversation: 'Samtale', skip: 'Gå til spørsmålsfeltet',
      hint: 'Enter sender, Shift+Enter begynner en ny linje, Esc stopper et svar. Svar kan være feil: sjekk kildene.',
      greeting: (site) => `Hei! Spør meg om hva som helst om ${site}.`,
      lead: 'Jeg svarer ut fra nettstedets egne sider og lenker til sidene jeg har brukt.',
      sources: 'Kilder', copy: 'Kopier', copyLabel: 'Kopier dette svaret', copied: 'Kopiert', model: 'Modell' },
    da: { newChat: 'Ny samtale', newChatLabel: 'Ny samtale: ryd samtalen', send: 'Send', stop: 'Stop',
      prompt: 'Stil et spørgsmål…', question: 'Dit spørgsmål', conversation: 'Samtale', skip: 'Gå til spørgsmålsfeltet',
      hint: 'Enter sender, Skift+Enter begynder en ny linje, Esc stopper et svar. Svar kan være forkerte: tjek kilderne.',
      greeting: (site) => `Hej! Spørg mig om hvad som helst om ${site}.`,
      lead: 'Jeg svarer ud fra webstedets egne sider og linker til de sider, jeg har brugt.',
      sources: 'Kilder', copy: 'Kopiér', copyLabel: 'Kopiér dette svar', copied: 'Kopieret', model: 'Model' },
    pl: { newChat: 'Nowa rozmowa', newChatLabel: 'Nowa rozmowa: wyczyść rozmowę', send: 'Wyślij', stop: 'Zatrzymaj',
      prompt: 'Zadaj pytanie…', question: 'Twoje pytanie', conversation: 'Rozmowa', skip: 'Przejdź do pola pytania',
      hint: 'Enter wysyła, Shift+Enter zaczyna nowy wiersz, Esc zatrzymuje odpowiedź. Odpowiedzi mogą być błędne: sprawdź źródła.',
      greeting: (site) => `Cześć! Zapytaj mnie o cokolwiek na temat ${site}.`,
      lead: 'Odpowiadam na podstawie stron samej witryny i podaję linki do stron, z których skorzystałem.',
      sources: 'Źródła', copy: 'Kopiuj', copyLabel: 'Skopiuj tę odpowiedź', copied: 'Skopiowano', model: 'Model' },
    ar: { newChat: 'محادثة جديدة', newChatLabel: 'محادثة جديدة: امسح المحادثة', send: 'إرسال', stop: 'إيقاف',
      prompt: 'اطرح سؤالًا…', question: 'سؤالك', conversation: 'المحادثة', skip: 'انتقل إلى مربع السؤال',
      hint: 'Enter يرسل، وShift+Enter يبدأ سطرًا جديدًا، وEsc يوقف الإجابة. قد تكون الإجابات خاطئة: راجع المصادر.',
      greeting: (site) => `مرحبًا! اسألني أي شيء عن ${site}.`,
      lead: 'أجيب من صفحات الموقع نفسه، وأضع روابط الصفحات التي استخدمتها.',
      sources: 'المصادر', copy: 'نسخ', copyLabel: 'انسخ هذه الإجابة', copied: 'تم النسخ', model: 'النموذج' },
    fa: { newChat: 'گفتگوی تازه', newChatLabel: 'گفتگوی تازه: پاک کردن گفتگو', send: 'ارسال', stop: 'توقف',
      prompt: 'سؤالی بپرسید…', question: 'سؤال شما', conversation: 'گفتگو', skip: 'رفتن به کادر سؤال',
      hint: 'Enter می‌فرستد، Shift+Enter خط تازه‌ای آغاز می‌کند، Esc پاسخ را متوقف می‌کند. پاسخ‌ها ممکن است نادرست باشند: منابع را بررسی کنید.',
      greeting: (site) => `سلام! هر چه دربارهٔ ${site} می‌خواهید از من بپرسید.`,
      lead: 'از صفحه‌های خود وب‌سایت پاسخ می‌دهم و به صفحه‌هایی که به کار برده‌ام پیوند می‌دهم.',
      sources: 'منابع', copy: 'رونوشت', copyLabel: 'رونوشت این پاسخ', copied: 'رونوشت شد', model: 'مدل' },
    zh: { newChat: '新对话', newChatLabel: '新对话：清空对话', send: '发送', stop: '停止',
      prompt: '输入问题…', question: '你的问题', conversation: '对话', skip: '跳到提问框',
      hint: '按 Enter 发送，Shift+Enter 换行，Esc 停止回答。回答可能有误：请核对来源。',
      greeting: (site) => `你好！关于${site}，有什么都可以问我。`,
      lead: '我根据网站自己的页面回答，并附上所用页面的链接。',
      sources: '来源', copy: '复制', copyLabel: '复制这条回答', copied: '已复制', model: '模型' },
  };
  LABELS.no = LABELS.nn = LABELS.nb; // Norwegian, whichever tag the browser gives
  const RTL = new Set(['ar', 'fa']); // the label languages written right to left
  let L = null; // the labels in use; null: the page's English
  const label = (key, english) => (L && L[key]) || english;
  function useLanguage(tag) {
    const base = String(tag || '').toLowerCase().split('-')[0];
    L = LABELS[base] || null;
    if (!L) return;
    root.lang = tag;
    if (RTL.has(base)) root.dir = 'rtl'; // the page's layout reads as its labels do
    const set = (id, text) => { const n = $(id); if (n) n.textContent = text; };
    set('new-chat', L.newChat);
    $('new-chat')?.setAttribute('aria-label', L.newChatLabel);
    set('send', L.send);
    set('stop', L.stop);
    set('prompt-hint', L.hint);
    $('prompt')?.setAttribute('placeholder', L.prompt);
    document.querySelector('label[for="prompt"]')?.replaceChildren(L.question);
    document.querySelector('a.skip')?.replaceChildren(L.skip);
    $('messages')?.setAttribute('aria-label', L.conversation);
    $('model')?.setAttribute('aria-label', L.model);
    const greeting = $('greeting');
    greeting?.querySelector('h2')?.replaceChildren(L.greeting(body.dataset.site || ''));
    greeting?.querySelector('p')?.replaceChildren(L.lead);
  }
  useLanguage((navigator.languages && navigator.languages[0]) || navigator.language);

  // Storage can be disabled or full (private modes); the page then simply forgets.
  const store = (area, k, v) => {
    try {
      if (v === undefined) return window[area].getItem(k);
      if (v === null) window[area].removeItem(k);
      else window[area].setItem(k, v);
    } catch { /* storage unavailable */ }
    return null;
  };

  // ---- theme: the system's by default, or the one the toggle chose (remembered in localStorage) ----
  const systemDark = matchMedia('(prefers-color-scheme: dark)');
  const theme = () => root.dataset.theme || (systemDark.matches ? 'dark' : 'light');
  function showTheme() {
    const dark = theme() === 'dark';
    ui.theme.setAttribute('aria-pressed', String(dark));
    ui.theme.title = dark ? 'Switch to the light theme' : 'Switch to the dark theme';
  }
  const saved = store('localStorage', THEME_STORE);
  if (saved === 'light' || saved === 'dark') root.dataset.theme = saved;
  showTheme();
  systemDark.addEventListener('change', showTheme);
  ui.theme.addEventListener('click', () => {
    root.dataset.theme = theme() === 'dark' ? 'light' : 'dark';
    store('localStorage', THEME_STORE, root.dataset.theme);
    showTheme();
  });

  // ---- markdown: marked for the syntax, DOMPurify for safety ----
  const escapeHTML = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  // A few harmless inline tags that models write into tables; any other raw HTML is shown as the text it is, so a
  // quoted <script> reads as code instead of vanishing (and never runs: DOMPurify and the CSP see to that).
  const SAFE_INLINE = /^<\/?(?:br|b|i|em|strong|sub|sup|kbd|mark|del|s|u)\s*\/?>$/i;
  marked.use({
    gfm: true,
    renderer: {
      html({ text, block }) {
        if (!block && SAFE_INLINE.test(text)) return text;
        return block ? `<p>${escapeHTML(text)}</p>` : escapeHTML(text);
      },
      // Images are never loaded: a remote image in an answer could carry data off to another site.
      image({ text }) {
        return `<span class="img-note">[image: ${escapeHTML(text || 'untitled')}]</span>`;
      },
    },
  });
  const PURIFY = {
    ALLOWED_TAGS: ['a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i',
      'kbd', 'li', 'mark', 'ol', 'p', 'pre', 's', 'span', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'th',
      'thead', 'tr', 'u', 'ul'],
    // DOMPurify's default URI check drops script URLs; the hook below narrows links to http(s) and mailto. (Its
    // ALLOWED_URI_REGEXP would also apply to the values of align, class and title, so it stays the default.)
    ALLOWED_ATTR: ['href', 'title', 'align', 'start', 'class'],
    RETURN_DOM_FRAGMENT: true,
  };
  const BLOCKS = new Set(['P', 'LI', 'BLOCKQUOTE', 'TABLE', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'UL', 'OL']);
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    // Only marked's own classes (code languages, the image note), never one that could pose as the page's UI.
    const cls = node.getAttribute('class');
    if (cls && !/^(language-[\w+#.-]+|img-note)$/.test(cls)) node.removeAttribute('class');
    // Each block takes its direction from its own text: an English quote in an answer that opens in Persian, or
    // a Persian one under an English line, reads as it is written.
    if (BLOCKS.has(node.tagName)) node.setAttribute('dir', 'auto');
    if (node.tagName !== 'A') return;
    const href = node.getAttribute('href') || '';
    if (/^https?:/i.test(href)) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    } else if (!/^mailto:/i.test(href)) {
      node.removeAttribute('href');
    }
  });
  const toDOM = (md) => DOMPurify.sanitize(marked.parse(md), PURIFY);

  // ---- sources ----
  // The index in the string of the n-th code point (annotation indices count code points, JS strings UTF-16).
  function codePointIndex(s, n) {
    let i = 0;
    for (const ch of s) {
      if (n-- <= 0) break;
      i += ch.length;
    }
    return i;
  }
  const httpURL = (u) => {
    try {
      const url = new URL(u);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
    } catch { return null; }
  };

  // split separates an answer into the markdown to render and its sources. The proxy ends answers with a
  // "**Sources**" list; when annotations point into it, the list is cut from the text and shown as links below.
  // Without annotations the list itself is parsed, as long as it is the end of the answer.
  function split(m) {
    const c = m.content;
    if (m.cut === undefined && m.annotations) {
      const starts = m.annotations.map((a) => a?.url_citation?.start_index).filter(Number.isInteger);
      const at = starts.length ? c.lastIndexOf('**Sources**', codePointIndex(c, Math.min(...starts))) : -1;
      m.cut = at;
      m.sources = m.annotations.filter((a) => a?.type === 'url_citation' && a.url_citation)
        .map((a) => ({ url: a.url_citation.url, title: a.url_citation.title }));
    }
    if (m.cut >= 0) return c.slice(0, m.cut).trimEnd();
    if (m.annotations) return c;
    const at = c.lastIndexOf('\n**Sources**\n');
    if (at < 0) return c;
    const lines = c.slice(at + 13).split('\n').filter((l) => l.trim());
    const items = lines.map((l) => /^[-*] \[([^\]]*)\]\((\S+?)\)\s*$/.exec(l));
    // While streaming, the last line may be unfinished; every other line must be a link item.
    if (!items.length || (m.final ? items : items.slice(0, -1)).some((x) => !x)) return c;
    m.sources = items.filter(Boolean).map((x) => ({ title: x[1], url: x[2] }));
    return c.slice(0, at).trimEnd();
  }

  function showSources(m) {
    const seen = new Set();
    const list = (m.sources || []).filter((s) => {
      const url = httpURL(s.url);
      if (!url || seen.has(url)) return false;
      seen.add(url);
      s.url = url;
      return true;
    });
    const key = list.map((s) => s.url + ' ' + s.title).join('\n');
    if (key === m.sourcesKey) return;
    m.sourcesKey = key;
    m.sourcesEl.hidden = !list.length;
    const ol = m.sourcesEl.querySelector('ol');
    ol.replaceChildren(...list.map((s) => {
      const a = document.createElement('a');
      a.href = s.url;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      a.textContent = s.title || s.url;
      a.title = s.url;
      const li = document.createElement('li');
      li.append(a);
      return li;
    }));
  }

  // ---- rendering: at most once per animation frame ----
  // While an answer streams, its finished blocks are parsed once and kept ("frozen"); only the block being written
  // is re-parsed on each frame. A block is finished when a blank line is followed by a line that starts a new
  // top-level block (not a list item, quote, table row, indented text, or anything inside a code fence). The
  // final render parses the whole answer once, so block splitting can never leave a visible difference.
  const CONTINUES = /^(?:\s|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)|>|\|)/;
  function stableEnd(text, from) {
    let end = from;
    let fence = null;
    let blank = false;
    for (let pos = from; pos < text.length;) {
      let nl = text.indexOf('\n', pos);
      const complete = nl >= 0;
      if (!complete) nl = text.length;
      const line = text.slice(pos, nl);
      // An unfinished line is judged only once its start can no longer turn into a list marker.
      if (!complete && line.length < 12) break;
      const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (f && f[1][0] === fence[0] && f[1].length >= fence.length && !line.slice(f[0].length).trim()) fence = null;
      } else {
        if (blank && pos > from && !CONTINUES.test(line)) end = pos;
        if (f) fence = f[1];
      }
      blank = !fence && !line.trim();
      pos = nl + 1;
    }
    return end;
  }

  function render(m) {
    m.queued = false;
    const text = split(m);
    if (m.final) {
      m.answer.replaceChildren(toDOM(text));
      m.frozen = m.tail = null;
    } else {
      if (!m.frozen || !text.startsWith(m.frozenText)) {
        m.frozen = document.createElement('div');
        m.tail = document.createElement('div');
        m.frozen.className = m.tail.className = 'part';
        m.frozenText = '';
        m.answer.replaceChildren(m.frozen, m.tail);
      }
      const end = stableEnd(text, m.frozenText.length);
      if (end > m.frozenText.length) {
        m.frozen.append(toDOM(text.slice(m.frozenText.length, end)));
        m.frozenText = text.slice(0, end);
      }
      m.tail.replaceChildren(toDOM(text.slice(end)));
    }
    showSources(m);
  }

  const nearBottom = () => innerHeight + scrollY >= root.scrollHeight - 120;
  function schedule(m) {
    if (m.queued) return;
    m.queued = true;
    requestAnimationFrame(() => {
      if (!m.queued) return;
      const follow = nearBottom();
      render(m);
      if (follow) scrollTo(0, root.scrollHeight);
    });
  }

  // ---- messages ----
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }
  function addMessage(role) {
    const li = el('li', `message ${role}`);
    ui.greeting.hidden = true;
    ui.messages.append(li);
    return li;
  }
  // A question and an answer take their direction from their own first letters (dir="auto"): an Arabic, Persian or
  // Hebrew one reads right to left, whatever the page's language.
  function addUser(text) {
    const li = addMessage('user');
    const p = el('p', 'text', text);
    p.dir = 'auto';
    li.append(el('span', 'visually-hidden', 'You: '), p);
    scrollTo(0, root.scrollHeight);
  }
  function addAssistant() {
    const li = addMessage('assistant streaming');
    li.setAttribute('aria-busy', 'true');
    const m = { li, content: '', annotations: null, answer: el('div', 'answer'), status: el('p', 'status') };
    m.answer.dir = 'auto';
    m.sourcesEl = el('nav', 'sources');
    m.sourcesEl.setAttribute('aria-label', label('sources', 'Sources'));
    m.sourcesEl.hidden = true;
    m.sourcesEl.append(el('h3', '', label('sources', 'Sources')), el('ol'));
    m.copy = el('button', 'copy', label('copy', 'Copy'));
    m.copy.type = 'button';
    m.copy.hidden = true;
    m.copy.setAttribute('aria-label', label('copyLabel', 'Copy this answer'));
    m.copy.addEventListener('click', () => copy(m));
    m.feedback = feedbackControls(m);
    const actions = el('div', 'actions');
    actions.append(m.copy, m.feedback, m.status);
    li.append(el('span', 'visually-hidden', 'Assistant: '), m.answer, m.sourcesEl, actions);
    return m;
  }
  // finish ends an answer: state is done, stopped or error (with a message to show).
  function finish(m, state, note) {
    m.final = true;
    m.queued = false;
    render(m);
    m.li.classList.remove('streaming');
    m.li.classList.add(state);
    m.li.removeAttribute('aria-busy');
    if (note) m.status.textContent = note;
    m.status.classList.toggle('error-text', state === 'error');
    m.copy.hidden = !m.content;
    // A visitor rates a whole answer (POST /v1/feedback), one the server gave an id; the widget's publishable key
    // is for chat only.
    m.feedback.hidden = embedded || state !== 'done' || !m.content || !m.id;
  }

  // feedbackControls are an answer's thumbs up and down, and after a thumbs down a line for what was wrong.
  function feedbackControls(m) {
    const box = el('div', 'feedback');
    box.hidden = true;
    const up = el('button', 'rate up', '👍');
    const down = el('button', 'rate down', '👎');
    up.type = down.type = 'button';
    up.setAttribute('aria-label', 'Good answer');
    down.setAttribute('aria-label', 'Bad answer');
    // A plain group, not a form: an answer holds no form (the page's checks of hostile answers look for one).
    const form = el('div', 'comment');
    form.hidden = true;
    const input = el('input');
    input.type = 'text';
    input.maxLength = 1000;
    input.placeholder = 'What was wrong? (optional)';
    input.setAttribute('aria-label', 'What was wrong with this answer (optional)');
    const send = el('button', '', 'Send');
    send.type = 'button';
    form.append(input, send);
    const note = el('span', 'feedback-note');
    note.setAttribute('role', 'status');
    box.append(up, down, form, note);
    const rate = async (rating, comment) => {
      for (const b of [up, down]) b.setAttribute('aria-pressed', String(b === (rating === 'up' ? up : down)));
      try {
        const res = await fetch('/v1/feedback', { method: 'POST', headers: headers(),
          body: JSON.stringify({ id: m.id, rating, ...(comment ? { comment } : {}) }) });
        note.textContent = res.ok ? 'Thanks for the feedback.' : await errorText(res);
      } catch (err) {
        note.textContent = `Network error: the feedback was not sent (${err.message}).`;
      }
    };
    up.addEventListener('click', () => { form.hidden = true; rate('up'); });
    down.addEventListener('click', () => { form.hidden = false; rate('down'); input.focus(); });
    const comment = () => {
      form.hidden = true;
      rate('down', input.value.trim());
    };
    send.addEventListener('click', comment);
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        comment();
      }
    });
    return box;
  }

  async function copy(m) {
    let ok = false;
    try {
      await navigator.clipboard.writeText(m.content);
      ok = true;
    } catch {
      // No clipboard API (plain http on another host) or no permission: the old way, via a selected textarea.
      const t = el('textarea', 'offscreen');
      t.value = m.content;
      document.body.append(t);
      t.select();
      try { ok = document.execCommand('copy'); } catch { ok = false; }
      t.remove();
      m.copy.focus();
    }
    m.copy.textContent = ok ? label('copied', 'Copied') : 'Copy failed: select the text';
    setTimeout(() => { m.copy.textContent = label('copy', 'Copy'); }, 2000);
  }

  // ---- the API ----
  const headers = () => {
    const h = { 'Content-Type': 'application/json' };
    const key = embedded ? visitor.key : authRequired && store('sessionStorage', KEY_STORE);
    if (key) h.Authorization = `Bearer ${key}`;
    if (visitor.page) {
      h['X-Ragproxy-Page'] = visitor.page;
      // A header value is bytes; the title can be any text.
      if (visitor.title) h['X-Ragproxy-Page-Title'] = encodeURIComponent(visitor.title);
    }
    return h;
  };
  // errorText reads OpenAI's error body ({"error":{"message":...}}) of a failed response.
  async function errorText(res) {
    let text = '';
    try {
      text = await res.text();
      const msg = JSON.parse(text)?.error?.message;
      if (msg) return String(msg);
    } catch { /* not JSON */ }
    return `The server answered ${res.status} ${res.statusText}${text ? `: ${text.slice(0, 300)}` : ''}`.trim();
  }
  class APIError extends Error {}

  // frames yields the data of each server-sent event of a response body (comments such as ": ping" are skipped).
  async function* frames(res) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let data = null;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        const lines = buf.split(/\r\n|\r|\n/);
        buf = lines.pop();
        for (const line of lines) {
          if (line === '') {
            if (data !== null) yield data;
            data = null;
          } else if (line.startsWith('data:')) {
            const d = line.slice(line[5] === ' ' ? 6 : 5);
            data = data === null ? d : `${data}\n${d}`;
          }
        }
      }
    } finally {
      // Release the connection also when the caller stops early (after [DONE], or on an error frame).
      reader.cancel().catch(() => {});
    }
    if (data !== null) yield data;
  }

  async function loadModels() {
    let list;
    try {
      const res = await fetch('/v1/models', { headers: headers() });
      if (!res.ok) return res.status === 401 ? errorText(res) : null;
      list = (await res.json())?.data;
    } catch { return null; }
    const ids = Array.isArray(list) ? [...new Set(list.map((x) => x?.id).filter((x) => typeof x === 'string'))] : [];
    if (ids.length < 2) return null;
    const keep = ui.model.value || body.dataset.model;
    ui.model.replaceChildren(...ids.map((id) => new Option(id, id)));
    ui.model.value = ids.includes(keep) ? keep : ids[0];
    ui.modelPick.hidden = false;
    return null;
  }

  // ---- the conversation ----
  let history = [];
  let current = null; // { controller, m } while an answer streams
  let generation = 0; // bumped by New chat, so an answer still finishing does not write into the new history

  function setBusy(busy) {
    ui.send.hidden = busy;
    ui.stop.hidden = !busy;
    ui.messages.setAttribute('aria-busy', String(busy));
  }

  async function ask(text) {
    const gen = generation;
    const turn = { role: 'user', content: text };
    history.push(turn);
    addUser(text);
    const m = addAssistant();
    const controller = new AbortController();
    current = { controller, m };
    setBusy(true);
    let state = 'done';
    let note = '';
    try {
      const res = await fetch('/v1/chat/completions', {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({ model: ui.model.value || body.dataset.model, messages: history, stream: true }),
        signal: controller.signal,
      });
      if (!res.ok) {
        const msg = await errorText(res);
        if (res.status === 401 && authRequired && !embedded) {
          store('sessionStorage', KEY_STORE, null);
          askKey(msg);
        }
        throw new APIError(msg);
      }
      let finished = false;
      for await (const data of frames(res)) {
        if (data === '[DONE]') {
          finished = true;
          break;
        }
        let chunk;
        try { chunk = JSON.parse(data); } catch { continue; }
        if (chunk?.error) throw new APIError(chunk.error.message || 'The server reported an error.');
        if (!m.id && typeof chunk?.id === 'string') m.id = chunk.id;
        const choice = chunk?.choices?.[0];
        if (!choice) continue; // e.g. Open WebUI source events, usage
        const delta = choice.delta || {};
        if (choice.finish_reason === 'length') note = 'The answer reached its length limit.';
        const grew = typeof delta.content === 'string' && delta.content !== '';
        if (grew) m.content += delta.content;
        if (Array.isArray(delta.annotations) && delta.annotations.length) m.annotations = delta.annotations;
        else if (!grew) continue; // a role-only or final chunk: nothing new to show
        schedule(m);
      }
      if (!finished) throw new APIError('The connection closed before the answer was complete.');
    } catch (err) {
      if (controller.signal.aborted) {
        state = 'stopped';
        note = 'Stopped.';
      } else {
        state = 'error';
        note = err instanceof APIError ? err.message : `Network error: could not reach the server (${err.message}).`;
      }
    }
    finish(m, state, note);
    if (current?.m === m) {
      current = null;
      setBusy(false);
    }
    if (gen !== generation) return;
    // The conversation keeps answers as received (Sources list included), a stopped one as far as it got; a failed
    // turn is dropped so that the next question is not sent after an unanswered one.
    if (state === 'error') history = history.filter((x) => x !== turn);
    else if (m.content) history.push({ role: 'assistant', content: m.content });
  }

  // The question box grows with its text: CSS field-sizing does it where supported, this elsewhere.
  const fit = () => {
    ui.prompt.style.height = 'auto';
    ui.prompt.style.height = `${ui.prompt.scrollHeight + 2}px`;
  };
  if (!CSS.supports('field-sizing', 'content')) ui.prompt.addEventListener('input', fit);

  function submit() {
    const text = ui.prompt.value.trim();
    if (!text || current) return;
    if (authRequired && !embedded && !store('sessionStorage', KEY_STORE)) {
      askKey('Enter an API key first.');
      return;
    }
    ui.prompt.value = '';
    if (ui.prompt.style.height) fit();
    ui.prompt.focus();
    ask(text);
  }
  ui.composer.addEventListener('submit', (e) => {
    e.preventDefault();
    submit();
  });
  ui.prompt.addEventListener('keydown', (e) => {
    // Enter sends; Shift+Enter (and Enter while an input method composes) is left to the textarea.
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    } else if (e.key === 'Escape' && current) {
      current.controller.abort();
    }
  });
  ui.stop.addEventListener('click', () => {
    current?.controller.abort();
    ui.prompt.focus();
  });
  ui.newChat.addEventListener('click', () => {
    generation++;
    current?.controller.abort();
    current = null;
    setBusy(false);
    history = [];
    ui.messages.replaceChildren();
    ui.greeting.hidden = false;
    ui.prompt.focus();
  });

  // ---- the API key (only when the server asks for one) ----
  function askKey(message) {
    ui.keyForm.hidden = false;
    ui.keyError.textContent = message || '';
    ui.key.value = '';
    ui.key.focus();
  }
  ui.keyForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const key = ui.key.value.trim();
    if (!key) {
      askKey('Enter an API key.');
      return;
    }
    store('sessionStorage', KEY_STORE, key);
    ui.save.disabled = true;
    // Check the key right away with /v1/models, which needs it too.
    const rejected = await loadModels();
    ui.save.disabled = false;
    if (rejected) {
      store('sessionStorage', KEY_STORE, null);
      askKey(rejected);
      return;
    }
    ui.key.value = '';
    ui.keyError.textContent = '';
    ui.keyForm.hidden = true;
    ui.prompt.focus();
  });

  // ---- in the widget: messages from the page that frames this one, checked for its origin and window ----
  function startEmbedded() {
    const post = (msg) => parent.postMessage({ ragproxy: 'widget', ...msg }, parentOrigin);
    const str = (v, n) => (typeof v === 'string' ? v.trim().slice(0, n) : '');
    addEventListener('message', (e) => {
      if (e.source !== parent || e.origin !== parentOrigin || e.data?.ragproxy !== 'widget') return;
      const m = e.data;
      if (m.type === 'context') {
        visitor.page = httpURL(str(m.url, 2048));
        visitor.title = str(m.title, 300);
        visitor.key = str(m.key, 200);
        const model = str(m.model, 100);
        if (model) body.dataset.model = model;
        const lang = str(m.lang, 35);
        if (/^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(lang)) {
          root.lang = lang;
          useLanguage(lang);
        }
        const greeting = str(m.greeting, 300);
        if (greeting) ui.greeting.querySelector('h2').textContent = greeting;
      } else if (m.type === 'focus') {
        ui.prompt.focus();
      }
    });
    // Esc stops an answer (the question box's handler), else closes the widget.
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !current && !e.defaultPrevented) post({ type: 'close' });
    });
    post({ type: 'ready' });
  }

  if (embedded) {
    // The widget's page gives the model and the key; a visitor is never asked for one.
    startEmbedded();
  } else if (authRequired && !store('sessionStorage', KEY_STORE)) {
    askKey('');
  } else {
    loadModels().then((rejected) => { if (rejected) askKey(rejected); });
    // Not on touch screens, where focusing would pop up the keyboard over the greeting.
    if (matchMedia('(pointer: fine)').matches) ui.prompt.focus();
  }
})();
