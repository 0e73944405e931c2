// The playground: paste a key, give HTML or a URL, pick options, get the PDF.
//
// The option controls are generated from the OpenAPI document the API serves (the schema that
// validates requests), so every option the API takes is here and nothing it refuses. All URLs are
// relative to the page's <base>, the API's public address: the page works at a local stack's root
// and under an API Gateway stage alike. No inline script, no third-party request (see the CSP).

const $ = (selector, root = document) => root.querySelector(selector);
const KEY_STORAGE = 'pdfapi.key';
const SAMPLE_HTML = `<!doctype html>
<html>
<body style="font-family: sans-serif">
  <h1>Invoice 2026-001</h1>
  <p>Total: <strong>120.00 EUR</strong></p>
</body>
</html>`;

// ---- the key: this tab only ----
const keyInput = $('#api-key');
keyInput.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
keyInput.addEventListener('input', () => sessionStorage.setItem(KEY_STORAGE, keyInput.value.trim()));

// ---- tabs ----
for (const tab of document.querySelectorAll('[role=tab]')) {
  tab.addEventListener('click', () => {
    for (const other of document.querySelectorAll('[role=tab]')) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      document.getElementById(other.getAttribute('aria-controls')).hidden = !selected;
    }
    // The options belong to both tabs: they move to the visible one.
    const panel = $('#options-panel');
    const target = tab.id === 'tab-batch' ? $('#items') : $('#generate');
    target.before(panel);
  });
}

// ---- source ----
$('#html').value = SAMPLE_HTML;
for (const radio of document.querySelectorAll('input[name=source]')) {
  radio.addEventListener('change', () => {
    const url = radio.value === 'url' && radio.checked;
    $('#html').hidden = url;
    $('#url').hidden = !url;
  });
}

// ---- options, from the OpenAPI document ----

/** Which control an option gets, from its JSON Schema. */
function controlKind(schema) {
  if (Array.isArray(schema.enum)) return 'enum';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.type === 'number' || schema.type === 'integer') return 'number';
  if (schema.type === 'string') return 'string';
  return 'json'; // objects, arrays, and either-or values such as margin
}

const optionControls = new Map(); // name -> { kind, schema, element }

function buildOptionControl(name, schema) {
  const kind = controlKind(schema);
  const row = document.createElement('div');
  row.className = `option option-${kind}`;
  const label = document.createElement('label');
  label.textContent = name;
  label.htmlFor = `opt-${name}`;
  let element;
  if (kind === 'enum' || kind === 'boolean') {
    element = document.createElement('select');
    const values = kind === 'enum' ? schema.enum : [true, false];
    const unset = new Option(schema.default !== undefined ? `default (${schema.default})` : '(not set)', '');
    element.append(unset, ...values.map((value) => new Option(String(value), JSON.stringify(value))));
  } else if (kind === 'json') {
    element = document.createElement('textarea');
    element.rows = 2;
    element.spellcheck = false;
    if (schema.examples?.[0] !== undefined) element.placeholder = JSON.stringify(schema.examples[0]);
  } else {
    element = document.createElement('input');
    element.type = kind === 'number' ? 'number' : 'text';
    if (kind === 'number') {
      if (schema.minimum !== undefined) element.min = String(schema.minimum);
      if (schema.maximum !== undefined) element.max = String(schema.maximum);
      element.step = schema.type === 'integer' ? '1' : 'any';
    }
    const example = schema.examples?.[0];
    element.placeholder = example !== undefined ? String(example) : schema.default !== undefined ? `default ${schema.default}` : '';
  }
  element.id = `opt-${name}`;
  element.name = `opt-${name}`;
  const help = document.createElement('small');
  help.textContent = schema.description ?? '';
  row.append(label, element, help);
  optionControls.set(name, { kind, schema, element });
  return row;
}

/** The options the form sets, as the API takes them; throws a sentence when one cannot be read. */
function readOptions() {
  const options = {};
  for (const [name, { kind, schema, element }] of optionControls) {
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
        else throw new Error(`${name} must be JSON, for example ${element.placeholder || '{}'}`);
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
    const properties = document_.components.schemas.DocumentOptions.properties;
    container.replaceChildren(...Object.entries(properties).map(([name, schema]) => buildOptionControl(name, schema)));
  } catch {
    container.textContent = 'The options could not be loaded from v1/openapi.json.';
  }
}

// ---- calling the API ----

async function callApi(path, body) {
  const key = keyInput.value.trim();
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key && { Authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => null);
  return { status: response.status, answer };
}

function showError(target, status, answer) {
  const error = answer?.error ?? { code: 'unexpected_response', message: `The API answered HTTP ${status}.` };
  const box = document.createElement('div');
  box.className = 'error';
  box.dataset.code = error.code;
  const code = document.createElement('strong');
  code.textContent = `${status} ${error.code}`;
  box.append(code, document.createTextNode(`: ${error.message}`));
  target.replaceChildren(box);
}

function link(href, text) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  a.rel = 'noopener noreferrer';
  return a;
}

function recordTable(record) {
  const table = document.createElement('table');
  table.className = 'record';
  for (const field of ['id', 'pages', 'size', 'format', 'filename', 'generation_time_ms', 'created_at', 'expires_at']) {
    const row = table.insertRow();
    row.insertCell().textContent = field;
    row.insertCell().textContent = String(record[field] ?? '');
    row.dataset.field = field;
  }
  return table;
}

let previewUrl;
/** Shows the PDF itself: its bytes, read through the download link, as a blob: URL. */
async function showPreview(url) {
  const frame = $('#preview');
  const response = await fetch(url);
  if (!response.ok) throw new Error(`The download link answered HTTP ${response.status}.`);
  const bytes = await response.arrayBuffer();
  if (previewUrl) URL.revokeObjectURL(previewUrl);
  previewUrl = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
  frame.src = previewUrl;
  frame.hidden = false;
}

async function generateOne() {
  const result = $('#single-result');
  const button = $('#generate');
  $('#preview').hidden = true;
  let body;
  try {
    const source = document.querySelector('input[name=source]:checked').value;
    body = { ...(source === 'url' ? { url: $('#url').value.trim() } : { html: $('#html').value }), ...readOptions() };
  } catch (error) {
    showError(result, 400, { error: { code: 'invalid_options', message: error.message } });
    return;
  }
  button.disabled = true;
  result.textContent = 'Generating…';
  try {
    const { status, answer } = await callApi('v1/pdf/generate', body);
    if (status !== 200) return showError(result, status, answer);
    const download = link(answer.url, 'Download the PDF');
    download.id = 'download-link';
    result.replaceChildren(download, recordTable(answer));
    await showPreview(answer.url).catch((error) => result.append(Object.assign(document.createElement('p'), { className: 'error', textContent: error.message })));
  } catch {
    showError(result, 0, { error: { code: 'network_error', message: 'The API could not be reached.' } });
  } finally {
    button.disabled = false;
  }
}

// ---- batch ----

function addItem(html = '') {
  const item = document.createElement('div');
  item.className = 'item';
  const area = document.createElement('textarea');
  area.rows = 4;
  area.spellcheck = false;
  area.value = html;
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.textContent = 'Remove';
  remove.addEventListener('click', () => item.remove());
  item.append(area, remove);
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
  const items = [...document.querySelectorAll('#items textarea')].map((area) => ({
    html: area.value,
    ...(Object.keys(options).length > 0 && { options }),
  }));
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

$('#generate').addEventListener('click', generateOne);
$('#add-item').addEventListener('click', () => addItem('<h1>Another document</h1>'));
$('#run-batch').addEventListener('click', runBatch);
addItem('<h1>First document</h1>');
addItem('<h1>Second document</h1><p>With a second paragraph.</p>');
loadOptions();
