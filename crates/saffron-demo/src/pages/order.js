const ORDER_ID = {{id}};
const noteForm = document.getElementById("note-form");
const note = document.getElementById("note");
const noteError = document.getElementById("note-error");
const notes = document.getElementById("notes");

noteForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  hide(noteError);
  const text = note.value.trim();
  if (text === "") {
    show(noteError, "Note is required");
    return;
  }
  const button = noteForm.querySelector("button[type=submit]");
  button.disabled = true;
  const r = await api("POST", "/api/orders/" + ORDER_ID + "/notes", { text });
  button.disabled = false;
  if (r.status === 201 && r.data) {
    const item = document.createElement("li");
    item.textContent = r.data.text;
    notes.append(item);
    note.value = "";
  } else if (r.status !== 401) {
    show(noteError, "Could not add the note");
  }
});

// The file input is hidden; the button opens its chooser, and each chosen file is sent as it is.
const attachButton = document.getElementById("attach");
const attachmentFile = document.getElementById("attachment-file");
const attachError = document.getElementById("attach-error");
const attachments = document.getElementById("attachments");

attachButton.addEventListener("click", () => attachmentFile.click());
attachmentFile.addEventListener("change", async () => {
  hide(attachError);
  for (const file of attachmentFile.files) {
    let res;
    try {
      res = await fetch("/api/orders/" + ORDER_ID + "/attachments?name=" + encodeURIComponent(file.name), {
        method: "POST",
        body: file,
      });
    } catch (_) {
      res = null;
    }
    if (res && res.status === 401) {
      location.assign("/login?expired=1");
      return;
    }
    if (!res || res.status !== 201) {
      show(attachError, "Could not attach " + file.name);
      return;
    }
    const data = await res.json();
    const item = document.createElement("li");
    item.textContent = data.name + " (" + data.size + " bytes)";
    attachments.append(item);
  }
  attachmentFile.value = "";
});
