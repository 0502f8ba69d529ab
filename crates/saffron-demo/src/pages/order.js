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
