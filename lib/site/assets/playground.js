// The playground: paste a key, give HTML or a URL, pick options, get the PDF.
//
// The option controls are generated from the OpenAPI document the API serves (the schema that
// validates requests), so every option the API takes is here and nothing it refuses. All URLs are
// relative to the page's <base>, the API's public address: the page works at a local stack's root
// and under an API Gateway stage alike. No inline script, no third-party request (see the CSP).
// PDFs are drawn page by page with pdf.js (served from this origin), so they show in any browser.

const $ = (selector, root = document) => root.querySelector(selector);
const KEY_STORAGE = 'pdfapi.key';
const SAMPLE_HTML = `<!doctype html>
<html>
<body style="font-family: sans-serif">
  <h1>Invoice 2026-001</h1>
  <p>Total: <strong>120.00 EUR</strong></p>
</body>
</html>`;
const SAMPLE_MARKDOWN = `# Release notes

| Feature | State |
|---------|-------|
| Images  | shipped |

- [x] Markdown in
- [ ] Coffee

\`\`\`js
const answer = 42;
\`\`\`
`;

// ---- the key: this tab only ----
const keyInput = $('#api-key');
keyInput.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
keyInput.addEventListener('input', () => {
  sessionStorage.setItem(KEY_STORAGE, keyInput.value.trim());
  keyInput.classList.remove('attention');
});

// ---- tabs ----
for (const tab of document.querySelectorAll('[role=tab]')) {
  tab.addEventListener('click', () => {
    for (const other of document.querySelectorAll('[role=tab]')) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      document.getElementById(other.getAttribute('aria-controls')).hidden = !selected;
    }
    if (tab.id === 'tab-templates') return openTemplates();
    if (tab.id === 'tab-image') return;
    // The options belong to both tabs: they move to the visible one (a template keeps its own).
    const panel = $('#options-panel');
    const target = tab.id === 'tab-batch' ? $('#items') : $('#generate');
    target.before(panel);
    showOptionsFor(tab.id === 'tab-batch' ? 'html' : currentSource());
  });
}

// ---- source ----
$('#html').value = SAMPLE_HTML;
const currentSource = () => document.querySelector('input[name=source]:checked').value;
for (const radio of document.querySelectorAll('input[name=source]')) {
  radio.addEventListener('change', () => {
    const source = currentSource();
    $('#html').hidden = source !== 'html';
    $('#markdown').hidden = source !== 'markdown';
    $('#url').hidden = source !== 'url';
    $('#template-source').hidden = source !== 'template';
    if (source === 'template') listSingleTemplates();
    showOptionsFor(source);
  });
}

/** The key's templates in the One PDF tab's picker, each with its sample data as the data to start from. */
async function listSingleTemplates() {
  const pick = $('#single-template');
  if (keyInput.value.trim() === '') {
    pick.replaceChildren(new Option('Paste your key above to list your templates', ''));
    return;
  }
  const { status, answer } = await callApi('v1/templates?limit=100', undefined, 'GET');
  if (status !== 200) return showError($('#single-result'), status, answer);
  const options = answer.data.map((template) => new Option(`${template.name} (v${template.version}, ${template.template_id})`, template.template_id));
  pick.replaceChildren(...(options.length ? options : [new Option('No templates yet: make one in the Templates tab', '')]));
  if (options.length) await fillSingleData();
}

async function fillSingleData() {
  const id = $('#single-template').value;
  if (!id) return;
  const { status, answer } = await callApi(`v1/templates/${encodeURIComponent(id)}`, undefined, 'GET');
  if (status === 200) $('#single-data').value = answer.sample_data === undefined ? '{}' : JSON.stringify(answer.sample_data, null, 2);
}
$('#single-template').addEventListener('change', fillSingleData);

// ---- options, from the OpenAPI document ----

/** Which control an option gets, from its JSON Schema. */
function controlKind(schema) {
  if (Array.isArray(schema.enum)) return 'enum';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.type === 'number' || schema.type === 'integer') return 'number';
  if (schema.type === 'string') return 'string';
  return 'json'; // objects, arrays, and either-or values such as margin
}

const optionControls = new Map(); // name -> { kind, schema, element, row }

/** The options shown first, open: what most documents set. The rest are folded under "More options". */
const COMMON_OPTIONS = ['format', 'orientation', 'margin', 'print_background'];

/**
 * An option's help, from the OpenAPI document's Markdown: `code`, **bold** and [links](https://…)
 * become elements (built, never parsed as HTML: the text stays text).
 */
function renderHelp(markdown) {
  const help = document.createElement('small');
  help.className = 'help';
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  for (const match of markdown.matchAll(pattern)) {
    help.append(document.createTextNode(markdown.slice(at, match.index)));
    if (match[1] !== undefined) help.append(Object.assign(document.createElement('code'), { textContent: match[1] }));
    else if (match[2] !== undefined) help.append(Object.assign(document.createElement('strong'), { textContent: match[2] }));
    else if (/^(https?:|#|[\w./-]+$)/.test(match[4])) help.append(link(match[4], match[3]));
    else help.append(document.createTextNode(match[3]));
    at = match.index + match[0].length;
  }
  help.append(document.createTextNode(markdown.slice(at)));
  return help;
}

/** A placeholder that reads as a hint, never as a value already filled in. */
function hint(schema) {
  const example = schema.examples?.[0];
  const short = example && typeof example === 'object' && (schema.anyOf ?? []).some((choice) => choice.type === 'string') ? Object.values(example)[0] : undefined;
  if (typeof short === 'string') return `e.g. ${short}, or ${JSON.stringify(example)}`;
  if (example !== undefined) return `e.g. ${typeof example === 'string' ? example : JSON.stringify(example)}`;
  if (schema.default !== undefined) return `default: ${schema.default}`;
  return '';
}

function buildOptionControl(name, schema) {
  const kind = controlKind(schema);
  const row = document.createElement('div');
  row.className = `option option-${kind}`;
  row.dataset.option = name;
  const label = document.createElement('label');
  label.textContent = name;
  label.htmlFor = `opt-${name}`;
  let element;
  if (kind === 'enum' || kind === 'boolean') {
    element = document.createElement('select');
    const values = kind === 'enum' ? schema.enum : [true, false];
    const unset = new Option(schema.default !== undefined ? `${schema.default} (default)` : '(not set)', '');
    element.append(unset, ...values.map((value) => new Option(String(value), JSON.stringify(value))));
  } else if (kind === 'json' && (schema.anyOf ?? []).some((choice) => choice.type === 'string')) {
    // A length or an object (margin): one line, the short form as its hint.
    element = document.createElement('input');
    element.type = 'text';
  } else if (kind === 'json') {
    element = document.createElement('textarea');
    element.rows = 2;
    element.spellcheck = false;
  } else {
    element = document.createElement('input');
    element.type = kind === 'number' ? 'number' : 'text';
    if (kind === 'number') {
      if (schema.minimum !== undefined) element.min = String(schema.minimum);
      if (schema.maximum !== undefined) element.max = String(schema.maximum);
      element.step = schema.type === 'integer' ? '1' : 'any';
    }
  }
  if (kind !== 'enum' && kind !== 'boolean') element.placeholder = hint(schema);
  element.id = `opt-${name}`;
  element.name = `opt-${name}`;
  row.append(label, element, renderHelp(schema.description ?? ''));
  // The common options show no help under them (to keep the first screen short): it is their tooltip.
  row.title = (schema.description ?? '').replace(/`([^`]+)`/g, '$1').replace(/\*\*([^*]+)\*\*/g, '$1');
  optionControls.set(name, { kind, schema, element, row });
  return row;
}

/** Shows only the options that apply to `source` (html, url or template); hidden ones are not sent. */
function showOptionsFor(source) {
  let folded = 0;
  for (const { schema, row } of optionControls.values()) {
    const appliesTo = schema['x-applies-to'];
    row.hidden = Array.isArray(appliesTo) && !appliesTo.includes(source);
    if (!row.hidden && row.parentElement?.id === 'options') folded++;
  }
  $('#more-options summary').textContent = `More options (${folded})`;
}

/** The options the form sets, as the API takes them; throws a sentence when one cannot be read. */
function readOptions() {
  const options = {};
  for (const [name, { kind, schema, element, row }] of optionControls) {
    if (row.hidden) continue;
    const raw = element.value.trim();
    if (raw === '') continue;
    if (kind === 'enum' || kind === 'boolean') options[name] = JSON.parse(raw);
    else if (kind === 'number') options[name] = Number(raw);
    else if (kind === 'string') options[name] = raw;
    else {
      try {
        options[name] = JSON.parse(raw);
      } catch {
        // margin is a length or an object: a bare length is a string, not JSON.
        if ((schema.anyOf ?? []).some((choice) => choice.type === 'string')) options[name] = raw;
        else throw new Error(`${name} must be JSON, for example ${element.placeholder.replace(/^e\.g\. /, '') || '{}'}`);
      }
    }
  }
  return options;
}

async function loadOptions() {
  const container = $('#options');
  try {
    const response = await fetch('v1/openapi.json');
    const document_ = await response.json();
    const properties = Object.entries(document_.components.schemas.DocumentOptions.properties);
    const common = properties.filter(([name]) => COMMON_OPTIONS.includes(name));
    const more = properties.filter(([name]) => !COMMON_OPTIONS.includes(name));
    $('#common-options').replaceChildren(...common.map(([name, schema]) => buildOptionControl(name, schema)));
    container.replaceChildren(...more.map(([name, schema]) => buildOptionControl(name, schema)));
    showOptionsFor($('#batch').hidden ? currentSource() : 'html');
  } catch {
    $('#common-options').textContent = 'The options could not be loaded from v1/openapi.json.';
  }
}

// ---- calling the API ----

/** A JSON request with the key; the answer's status and JSON body (null when it has none). */
async function callApi(path, body, method = 'POST') {
  const response = await requestApi(path, body, method);
  const answer = await response.json().catch(() => null);
  return { status: response.status, answer };
}

function requestApi(path, body, method = 'POST') {
  const key = keyInput.value.trim();
  return fetch(path, {
    method,
    headers: { ...(body !== undefined && { 'Content-Type': 'application/json' }), ...(key && { Authorization: `Bearer ${key}` }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

function showError(target, status, answer) {
  const error = answer?.error ?? { code: 'unexpected_response', message: `The API answered HTTP ${status}.` };
  const box = document.createElement('div');
  box.className = 'error';
  box.dataset.code = error.code;
  const code = document.createElement('strong');
  code.textContent = `${status} ${error.code}`;
  // A 401 here means the key field: say so in the page's words, not the API's header name.
  const message =
    status === 401
      ? keyInput.value.trim() === ''
        ? 'Paste your API key (pdfk_…) into the API key field at the top of the page, then try again.'
        : 'The API key in the field at the top was not accepted (mistyped, revoked, or of another stack): paste a valid key there, then try again.'
      : error.message;
  box.append(code, document.createTextNode(`: ${message}`));
  target.replaceChildren(box);
  if (status === 401) {
    keyInput.classList.add('attention');
    keyInput.focus();
  }
}

function link(href, text) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  a.rel = 'noopener noreferrer';
  return a;
}

/** A stored record in a result box: its download link, then its fields. */
function showStored(result, record, label, id) {
  const download = link(record.url, label);
  download.id = id;
  download.className = 'download';
  result.replaceChildren(download, recordTable(record));
}

function recordTable(record) {
  const table = document.createElement('table');
  table.className = 'record';
  // A picture's record has its media type and pixels where a PDF's has pages and paper.
  const shape = record.content_type?.startsWith('image/') ? ['content_type', 'width', 'height'] : ['pages', 'format'];
  for (const field of ['id', ...shape, 'size', 'filename', 'generation_time_ms', 'created_at', 'expires_at']) {
    const row = table.insertRow();
    row.insertCell().textContent = field;
    row.insertCell().textContent = String(record[field] ?? '');
    row.dataset.field = field;
  }
  return table;
}

let pdfjs;
/** pdf.js, loaded on first use (from this origin), its worker too. */
async function loadPdfJs() {
  if (!pdfjs) {
    pdfjs = await import('./pdf.min.mjs');
    pdfjs.GlobalWorkerOptions.workerSrc = new URL('./pdf.worker.min.mjs', import.meta.url).href;
  }
  return pdfjs;
}

/** Most pages drawn in a preview: enough to see a document, not a 2,000-page one. */
const MAX_DRAWN_PAGES = 20;

/**
 * Draws a PDF's pages into `container` as canvases (one per page, `data-page` its number), each as
 * wide as the container; answers how many were drawn.
 */
async function drawPdf(bytes, container) {
  const { getDocument } = await loadPdfJs();
  // A copy: pdf.js hands its data to its worker, which leaves the caller's buffer empty.
  const pdf = await getDocument({ data: new Uint8Array(bytes).slice(), isEvalSupported: false }).promise;
  const width = Math.max(200, container.clientWidth || 600);
  const canvases = [];
  try {
    for (let number = 1; number <= Math.min(pdf.numPages, MAX_DRAWN_PAGES); number++) {
      const page = await pdf.getPage(number);
      const unscaled = page.getViewport({ scale: 1 });
      const ratio = window.devicePixelRatio || 1;
      const viewport = page.getViewport({ scale: (width / unscaled.width) * ratio });
      const canvas = document.createElement('canvas');
      canvas.width = Math.floor(viewport.width);
      canvas.height = Math.floor(viewport.height);
      canvas.style.width = `${Math.floor(viewport.width / ratio)}px`;
      canvas.dataset.page = String(number);
      canvas.setAttribute('aria-label', `Page ${number} of ${pdf.numPages}`);
      await page.render({ canvas, canvasContext: canvas.getContext('2d'), viewport }).promise;
      canvases.push(canvas);
    }
    const more = pdf.numPages > MAX_DRAWN_PAGES ? [Object.assign(document.createElement('p'), { className: 'hint', textContent: `The first ${MAX_DRAWN_PAGES} of ${pdf.numPages} pages are shown: download the PDF for all.` })] : [];
    container.replaceChildren(...canvases, ...more);
    container.dataset.drawn = String(canvases.length);
    return canvases.length;
  } finally {
    await pdf.destroy();
  }
}

let previewUrl;
/** Shows the PDF itself, drawn page by page: its bytes, read through the download link. */
async function showPreview(url) {
  const frame = $('#preview');
  const response = await fetch(url);
  if (!response.ok) throw new Error(`The download link answered HTTP ${response.status}.`);
  const bytes = await response.arrayBuffer();
  if (previewUrl) URL.revokeObjectURL(previewUrl);
  previewUrl = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
  frame.hidden = false;
  frame.dataset.blob = previewUrl;
  await drawPdf(bytes, frame);
}

async function generateOne() {
  const result = $('#single-result');
  const button = $('#generate');
  $('#preview').hidden = true;
  delete $('#preview').dataset.drawn;
  let body;
  try {
    const source = currentSource();
    let document_;
    if (source === 'url') document_ = { url: $('#url').value.trim() };
    else if (source === 'html') document_ = { html: $('#html').value };
    else if (source === 'markdown') document_ = { markdown: $('#markdown').value };
    else {
      const id = $('#single-template').value;
      if (!id) throw new Error('Pick a template (make one in the Templates tab first).');
      const raw = $('#single-data').value.trim();
      let data;
      try {
        data = raw === '' ? {} : JSON.parse(raw);
      } catch (error) {
        throw new Error(`The data is not JSON: ${error.message}`);
      }
      document_ = { template_id: id, data };
    }
    body = { ...document_, ...readOptions() };
  } catch (error) {
    showError(result, 400, { error: { code: 'invalid_options', message: error.message } });
    return;
  }
  button.disabled = true;
  result.textContent = 'Generating…';
  try {
    const { status, answer } = await callApi('v1/pdf/generate', body);
    if (status !== 200) return showError(result, status, answer);
    showStored(result, answer, 'Download the PDF', 'download-link');
    await showPreview(answer.url).catch((error) => result.append(Object.assign(document.createElement('p'), { className: 'error', textContent: error.message })));
  } catch {
    showError(result, 0, { error: { code: 'network_error', message: 'The API could not be reached.' } });
  } finally {
    button.disabled = false;
  }
}

// ---- image ----

$('#markdown').value = SAMPLE_MARKDOWN;
$('#image-document').value = SAMPLE_HTML;
const imageSource = () => document.querySelector('input[name=image-source]:checked').value;
for (const radio of document.querySelectorAll('input[name=image-source]')) {
  radio.addEventListener('change', () => {
    const area = $('#image-document');
    area.value = imageSource() === 'markdown' ? SAMPLE_MARKDOWN : imageSource() === 'url' ? 'https://example.com' : SAMPLE_HTML;
  });
}

let imageUrl;
/** POST /v1/image/generate with the tab's source and image options; the picture shown from its download link. */
async function generateImage() {
  const result = $('#image-result');
  const preview = $('#image-preview');
  const button = $('#generate-image');
  preview.hidden = true;
  const source = imageSource();
  const text = $('#image-document').value;
  const body = {
    [source]: source === 'url' ? text.trim() : text,
    image: {
      format: $('#image-format').value,
      width: Number($('#image-width').value),
      height: Number($('#image-height').value),
      device_scale_factor: Number($('#image-scale').value),
      ...($('#image-full-page').checked && { full_page: true }),
    },
  };
  button.disabled = true;
  result.textContent = 'Taking the picture…';
  try {
    const { status, answer } = await callApi('v1/image/generate', body);
    if (status !== 200) return showError(result, status, answer);
    showStored(result, answer, 'Download the picture', 'image-download-link');
    const response = await fetch(answer.url);
    if (!response.ok) throw new Error(`The download link answered HTTP ${response.status}.`);
    if (imageUrl) URL.revokeObjectURL(imageUrl);
    imageUrl = URL.createObjectURL(await response.blob());
    preview.src = imageUrl;
    preview.hidden = false;
  } catch (error) {
    showError(result, 0, { error: { code: 'network_error', message: error instanceof Error ? error.message : 'The API could not be reached.' } });
  } finally {
    button.disabled = false;
  }
}
$('#generate-image').addEventListener('click', generateImage);

// ---- batch ----

function addItem(html = '') {
  const item = document.createElement('div');
  item.className = 'item';
  const area = document.createElement('textarea');
  area.rows = 4;
  area.spellcheck = false;
  area.value = html;
  area.className = 'item-html';
  area.setAttribute('aria-label', 'HTML of this item');
  const own = document.createElement('details');
  own.className = 'item-options';
  const summary = document.createElement('summary');
  summary.textContent = 'Options for this item';
  const options = document.createElement('textarea');
  options.rows = 2;
  options.spellcheck = false;
  options.placeholder = 'e.g. { "format": "A5", "orientation": "landscape" }';
  options.setAttribute('aria-label', 'Options of this item (JSON)');
  own.append(summary, options);
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.textContent = 'Remove';
  remove.addEventListener('click', () => item.remove());
  const body = document.createElement('div');
  body.className = 'item-body';
  body.append(area, own);
  item.append(body, remove);
  $('#items').append(item);
}

async function runBatch() {
  const result = $('#batch-result');
  const button = $('#run-batch');
  let options;
  try {
    options = readOptions();
  } catch (error) {
    showError(result, 400, { error: { code: 'invalid_options', message: error.message } });
    return;
  }
  let items;
  try {
    items = [...document.querySelectorAll('#items .item')].map((item, index) => {
      const raw = $('.item-options textarea', item).value.trim();
      let own = {};
      try {
        own = raw === '' ? {} : JSON.parse(raw);
      } catch (error) {
        throw new Error(`The options of item #${index + 1} are not JSON: ${error.message}`);
      }
      const merged = { ...options, ...own };
      return { html: $('.item-html', item).value, ...(Object.keys(merged).length > 0 && { options: merged }) };
    });
  } catch (error) {
    showError(result, 400, { error: { code: 'invalid_options', message: error.message } });
    return;
  }
  button.disabled = true;
  result.textContent = `Generating ${items.length} PDFs…`;
  try {
    const { status, answer } = await callApi('v1/pdf/batch', { pdfs: items, ...($('#merge').checked && { merge: true }) });
    if (status !== 200) return showError(result, status, answer);
    const summary = document.createElement('p');
    summary.className = 'summary';
    summary.textContent = `${answer.successful} of ${answer.total} succeeded, ${answer.failed} failed, in ${answer.processing_time_ms} ms.`;
    const table = document.createElement('table');
    table.className = 'items';
    answer.results.forEach((item, index) => {
      const row = table.insertRow();
      row.dataset.success = String(item.success);
      row.insertCell().textContent = `#${index + 1}`;
      if (item.success) {
        row.insertCell().textContent = `${item.pages} pages, ${item.size_bytes} bytes`;
        row.insertCell().append(link(item.download_url, 'Download'));
      } else {
        row.dataset.code = item.error.code;
        row.insertCell().textContent = item.error.code;
        row.insertCell().textContent = item.error.message;
      }
    });
    result.replaceChildren(summary, table);
    if (answer.merged) result.append(link(answer.merged.url, `Download the merged PDF (${answer.merged.pages} pages)`));
  } catch {
    showError(result, 0, { error: { code: 'network_error', message: 'The API could not be reached.' } });
  } finally {
    button.disabled = false;
  }
}

// ---- templates ----
//
// A template is edited here and saved through the API: POST for its first version, PUT for each
// next one (versions never change). Preview renders a saved version with the data in the editor
// (POST v1/templates/{id}/preview answers the PDF itself, stored nowhere and not charged): edits
// to the template itself are previewed once saved, and the page says when the preview is older
// than the editor, rather than saving a version for every look (a tier keeps a number of versions).

const NEW_TEMPLATE = {
  name: 'Hello template',
  html: `<!doctype html>
<html>
<body style="font-family: sans-serif">
  <h1>Hello {{ customer.name }}</h1>
  <ul>
  {%- for item in items %}
    <li>{{ item }}</li>
  {%- endfor %}
  </ul>
</body>
</html>`,
  sample_data: { customer: { name: 'Ada Lovelace' }, items: ['Analytical engine', 'Notes on the engine'] },
};

/** The editor's fields that make a version's output; the sample data is sent with each preview. */
const TEMPLATE_SOURCE_FIELDS = ['#template-html', '#template-header', '#template-footer', '#template-schema', '#template-options'];

/** The saved version the editor holds ({ template_id, version, latest_version }), or null for a new template. */
let currentTemplate = null;
/** The source fields as last loaded or saved, to tell unsaved edits. */
let savedSource = null;
let templatesListed = false;
let templatePreviewUrl;

const editorSource = () => TEMPLATE_SOURCE_FIELDS.map((selector) => $(selector).value).join('\u0000');
const hasUnsavedEdits = () => savedSource !== editorSource();

function fillEditor(template) {
  const json = (value) => (value === undefined ? '' : JSON.stringify(value, null, 2));
  $('#template-name').value = template.name ?? '';
  $('#template-html').value = template.html ?? '';
  $('#template-header').value = template.header_html ?? '';
  $('#template-footer').value = template.footer_html ?? '';
  $('#template-data').value = json(template.sample_data);
  $('#template-schema').value = json(template.data_schema);
  $('#template-options').value = json(template.options);
}

/** A JSON field of the editor: its value, or undefined when empty; throws a sentence naming the field. */
function editorJson(selector, what) {
  const raw = $(selector).value.trim();
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new Error(`${what} is not JSON: ${error.message}`);
  }
}

/** The editor's template as the API takes it: a whole version, for POST and PUT alike. */
function editorTemplate() {
  const header = $('#template-header').value;
  const footer = $('#template-footer').value;
  const options = editorJson('#template-options', 'The options');
  const schema = editorJson('#template-schema', 'The data schema');
  const sample = editorJson('#template-data', 'The sample data');
  return {
    name: $('#template-name').value.trim(),
    html: $('#template-html').value,
    ...(header.trim() !== '' && { header_html: header }),
    ...(footer.trim() !== '' && { footer_html: footer }),
    ...(options !== undefined && { options }),
    ...(schema !== undefined && { data_schema: schema }),
    ...(sample !== undefined && { sample_data: sample }),
  };
}

/** The editor now holds `template` as saved (a version's view), or a new template (null). */
function setCurrentTemplate(template) {
  currentTemplate = template && { template_id: template.template_id, version: template.version, latest_version: template.latest_version };
  savedSource = template ? editorSource() : null;
  const versions = $('#template-version');
  const latest = template?.latest_version ?? 0;
  versions.replaceChildren(...Array.from({ length: latest }, (_, index) => new Option(`${latest - index}${index === 0 ? ' (latest)' : ''}`, String(latest - index))));
  versions.value = template ? String(template.version) : '';
  versions.disabled = !template;
  $('#template-status').textContent = !template
    ? 'Not saved yet'
    : template.version === latest
      ? `${template.template_id}`
      : `${template.template_id}: an older version; saving makes the editor's content version ${latest + 1}`;
  if (template) $('#template-pick').value = template.template_id;
}

function clearTemplatePreview() {
  $('#template-frame').hidden = true;
  $('#template-frame-empty').hidden = false;
}

function templateError(message, code = 'invalid_request') {
  showError($('#template-result'), 0, { error: { code, message } });
}

/** The key's templates, every page of them, into the picker. */
async function listTemplates() {
  const result = $('#template-result');
  if (keyInput.value.trim() === '') {
    result.textContent = 'Paste an API key above to list and save its templates.';
    return;
  }
  const found = [];
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: '100', ...(cursor && { cursor }) });
    const { status, answer } = await callApi(`v1/templates?${query}`, undefined, 'GET');
    if (status !== 200) return showError(result, status, answer);
    found.push(...answer.data);
    cursor = answer.next_cursor;
  } while (cursor);
  const options = found.map((template) => new Option(`${template.name} (v${template.version}, ${template.template_id})`, template.template_id));
  $('#template-pick').replaceChildren(new Option('New template', ''), ...options);
  $('#template-pick').value = currentTemplate?.template_id ?? '';
  templatesListed = true;
}

async function loadTemplate(id, version) {
  const result = $('#template-result');
  const query = version === undefined ? '' : `?version=${encodeURIComponent(version)}`;
  const { status, answer } = await callApi(`v1/templates/${encodeURIComponent(id)}${query}`, undefined, 'GET');
  if (status !== 200) return showError(result, status, answer);
  fillEditor(answer);
  setCurrentTemplate(answer);
  clearTemplatePreview();
  result.textContent = `Loaded version ${answer.version} of ${answer.name}.`;
}

function newTemplate(template = NEW_TEMPLATE) {
  fillEditor(template);
  setCurrentTemplate(null);
  $('#template-pick').value = '';
  clearTemplatePreview();
}

async function saveTemplate() {
  const result = $('#template-result');
  const button = $('#template-save');
  let body;
  try {
    body = editorTemplate();
  } catch (error) {
    return templateError(error.message, 'invalid_json');
  }
  button.disabled = true;
  result.textContent = 'Saving…';
  try {
    const { status, answer } = currentTemplate
      ? await callApi(`v1/templates/${encodeURIComponent(currentTemplate.template_id)}`, body, 'PUT')
      : await callApi('v1/templates', body);
    if (status !== 200 && status !== 201) return showError(result, status, answer);
    setCurrentTemplate(answer);
    const saved = document.createElement('p');
    saved.className = 'saved';
    saved.textContent = `Saved version ${answer.version} of ${answer.template_id}.`;
    result.replaceChildren(saved);
    await listTemplates();
  } catch {
    showError(result, 0, { error: { code: 'network_error', message: 'The API could not be reached.' } });
  } finally {
    button.disabled = false;
  }
}

async function previewTemplate() {
  const result = $('#template-result');
  const button = $('#template-preview');
  if (!currentTemplate) return templateError('Save the template first: a preview renders a saved version, with the sample data above.', 'not_saved');
  let data;
  try {
    data = editorJson('#template-data', 'The sample data');
  } catch (error) {
    return templateError(error.message, 'invalid_json');
  }
  const { template_id: id, version } = currentTemplate;
  const unsaved = hasUnsavedEdits();
  button.disabled = true;
  result.textContent = 'Rendering the preview…';
  try {
    const response = await requestApi(`v1/templates/${encodeURIComponent(id)}/preview`, { version, ...(data !== undefined && { data }) });
    if (!response.ok) return showError(result, response.status, await response.json().catch(() => null));
    const bytes = await response.arrayBuffer();
    if (templatePreviewUrl) URL.revokeObjectURL(templatePreviewUrl);
    templatePreviewUrl = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
    const frame = $('#template-frame');
    frame.hidden = false;
    $('#template-frame-empty').hidden = true;
    await drawPdf(bytes, frame);
    frame.dataset.blob = templatePreviewUrl;
    const pages = response.headers.get('X-Pdf-Pages');
    const info = document.createElement('p');
    info.id = 'template-preview-info';
    info.textContent = `Version ${response.headers.get('X-Template-Version') ?? version}${pages ? `, ${pages} ${pages === '1' ? 'page' : 'pages'}` : ''}, ${bytes.byteLength} bytes: not stored, not charged.`;
    result.replaceChildren(info);
    if (unsaved) {
      const notice = document.createElement('p');
      notice.className = 'notice';
      notice.id = 'template-unsaved';
      notice.textContent = `The editor has unsaved changes to the template: this is version ${version} as saved (with the data above). Save a new version to preview them.`;
      result.append(notice);
    }
  } catch {
    showError(result, 0, { error: { code: 'network_error', message: 'The API could not be reached.' } });
  } finally {
    button.disabled = false;
  }
}

/** The worked invoice example (examples/invoice/ in the checkout), as a new template. */
async function loadInvoiceExample() {
  const names = ['example-invoice.html', 'example-invoice-footer.html', 'example-invoice-data.json', 'example-invoice-schema.json', 'example-invoice-options.json'];
  try {
    const [html, footer, data, schema, options] = await Promise.all(
      names.map(async (name) => {
        const response = await fetch(`assets/${name}`);
        if (!response.ok) throw new Error(`assets/${name} answered HTTP ${response.status}`);
        return name.endsWith('.json') ? response.json() : response.text();
      }),
    );
    newTemplate({ name: 'Invoice (example)', html, footer_html: footer, sample_data: data, data_schema: schema, options });
    $('#template-result').textContent = 'The invoice example (examples/invoice/): save it, then preview it.';
  } catch (error) {
    templateError(`The example could not be loaded: ${error.message}`, 'example_unavailable');
  }
}

function openTemplates() {
  if (!templatesListed) listTemplates();
}

keyInput.addEventListener('change', () => {
  templatesListed = false;
  if (!$('#templates').hidden) listTemplates();
  if (currentSource() === 'template') listSingleTemplates();
});
$('#template-pick').addEventListener('change', () => {
  const id = $('#template-pick').value;
  if (id === '') newTemplate();
  else loadTemplate(id);
});
$('#template-version').addEventListener('change', () => loadTemplate(currentTemplate.template_id, Number($('#template-version').value)));
$('#template-refresh').addEventListener('click', listTemplates);
$('#template-example').addEventListener('click', loadInvoiceExample);
$('#template-save').addEventListener('click', saveTemplate);
$('#template-preview').addEventListener('click', previewTemplate);
newTemplate();

$('#generate').addEventListener('click', generateOne);
$('#add-item').addEventListener('click', () => addItem('<h1>Another document</h1>'));
$('#run-batch').addEventListener('click', runBatch);
addItem('<h1>First document</h1>');
addItem('<h1>Second document</h1><p>With a second paragraph.</p>');
loadOptions();
