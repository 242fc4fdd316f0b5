// Signing in the page: the person's Ed25519 key is generated here with WebCrypto as a
// non-extractable key, kept in this browser's IndexedDB, and never sent anywhere; only its
// public half is registered. Approving or publishing signs the exact statement bytes the page
// carries (data-statement, base64) and posts {"statement", "signature"} (base64url).
// Without JavaScript the forms still work with `evidence-compiler sign-approval`.
(function () {
  "use strict";
  const DB = "evidence-workbench-keys", STORE = "keys", SLOT = "signing-key";

  function db() {
    return new Promise(function (resolve, reject) {
      const request = indexedDB.open(DB, 1);
      request.onupgradeneeded = function () { request.result.createObjectStore(STORE); };
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { reject(request.error); };
    });
  }

  async function stored(value) {
    const handle = await db();
    return new Promise(function (resolve, reject) {
      const tx = handle.transaction(STORE, value === undefined ? "readonly" : "readwrite");
      const store = tx.objectStore(STORE);
      const request = value === undefined ? store.get(SLOT) : store.put(value, SLOT);
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { reject(request.error); };
    });
  }

  function bytesOf(base64) {
    return Uint8Array.from(atob(base64), function (c) { return c.charCodeAt(0); });
  }

  function base64url(buffer) {
    let text = "";
    new Uint8Array(buffer).forEach(function (b) { text += String.fromCharCode(b); });
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function pem(spki) {
    let text = "";
    new Uint8Array(spki).forEach(function (b) { text += String.fromCharCode(b); });
    const body = btoa(text).match(/.{1,64}/g).join("\n");
    return "-----BEGIN PUBLIC KEY-----\n" + body + "\n-----END PUBLIC KEY-----\n";
  }

  function fail(form, message) {
    const box = form.querySelector("[data-sign-error]");
    if (box) { box.textContent = message; box.hidden = false; }
  }

  async function createKey(form) {
    const confirm = form.querySelector("[data-retire-confirm]");
    if (confirm && !confirm.checked) {
      // Generating first would overwrite this browser's current key before anyone agreed.
      throw new Error("Tick the box first: a new key retires your current one.");
    }
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    await stored(pair);
    const spki = await crypto.subtle.exportKey("spki", pair.publicKey);
    form.querySelector("[name=public_key]").value = pem(spki);
    form.querySelector("[name=origin]").value = "browser";
    form.submit();
  }

  async function sign(form, holder) {
    const pair = await stored();
    if (!pair) {
      throw new Error("This browser holds no signing key: create one on the Signing keys page, or paste a statement signed with evidence-compiler sign-approval.");
    }
    const message = bytesOf(holder.dataset.statement);
    const statement = JSON.parse(new TextDecoder().decode(message));
    const raw = await crypto.subtle.exportKey("raw", pair.publicKey);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", raw));
    const id = Array.from(digest.slice(0, 8), function (b) { return b.toString(16).padStart(2, "0"); }).join("");
    if (id !== statement.key_id) {
      throw new Error("The key in this browser (" + id + ") is not your registered key (" + statement.key_id + "); register it, or sign with the key file.");
    }
    const signature = await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey, message);
    holder.querySelector("[name=signed_statement]").value = JSON.stringify({
      statement: statement, signature: base64url(signature),
    });
  }

  // Delegated from the document, so forms an htmx swap brings in sign too.
  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-keygen-button]");
    if (!button) { return; }
    const form = button.closest("form[data-keygen]");
    createKey(form).catch(function (error) { fail(form, "No key was created: " + error.message); });
  });

  document.addEventListener("submit", function (event) {
    const form = event.target;
    const holder = form.querySelector("[data-statement]");
    if (!holder) { return; }
    const field = holder.querySelector("[name=signed_statement]");
    if (field.value.trim() || form.dataset.signed) { return; }
    event.preventDefault();
    sign(form, holder).then(function () {
      form.dataset.signed = "1";
      form.submit();
    }, function (error) { fail(form, error.message); });
  });

  document.addEventListener("DOMContentLoaded", function () {
    if (!window.crypto || !crypto.subtle || !window.indexedDB) { return; }
    document.querySelectorAll("form[data-keygen] [data-keygen-button]").forEach(function (button) {
      button.hidden = false;
    });
  });
})();
