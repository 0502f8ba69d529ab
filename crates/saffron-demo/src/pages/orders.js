// "" or "/confirm" (drift "confirm-step"): where an order's link leads, as the server renders it.
const ORDER_LINK_SUFFIX = "{{order_link_suffix}}";
const tbody = document.getElementById("orders-body");
const resultCount = document.getElementById("result-count");
const flash = document.getElementById("flash");
const pageError = document.getElementById("page-error");

// The same markup the server renders for a row, so a search does not change how rows are found.
function orderRow(order) {
  const tr = document.createElement("tr");
  tr.draggable = true;
  const link = document.createElement("a");
  link.href = "/orders/" + order.id + ORDER_LINK_SUFFIX;
  link.textContent = order.number;
  for (const content of [link, order.customer, order.total, order.status]) {
    const td = document.createElement("td");
    td.append(content);
    tr.append(td);
  }
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "btn btn-danger";
  remove.dataset.id = String(order.id);
  remove.setAttribute("aria-label", "Delete order " + order.number);
  remove.textContent = "Delete";
  const td = document.createElement("td");
  td.append(remove);
  tr.append(td);
  return tr;
}

document.getElementById("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  hide(pageError);
  const q = document.getElementById("search").value;
  const r = await api("GET", "/api/orders?q=" + encodeURIComponent(q));
  if (!r.ok || !r.data) {
    if (r.status !== 401) show(pageError, "Could not search orders");
    return;
  }
  tbody.replaceChildren(...r.data.orders.map(orderRow));
  resultCount.textContent = plural(r.data.count);
});

// One listener for all rows, so rows re-rendered by a search keep working.
tbody.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-id]");
  if (!button) return;
  const id = button.dataset.id;
  if (!window.confirm("Delete order #" + id + "?")) return;
  hide(pageError);
  button.disabled = true;
  const r = await api("DELETE", "/api/orders/" + id);
  if (!r.ok) {
    button.disabled = false;
    if (r.status !== 401) show(pageError, "Could not delete order #" + id);
    return;
  }
  button.closest("tr").remove();
  resultCount.textContent = plural(tbody.rows.length);
  show(flash, "Order #" + id + " deleted");
});

// A double-click on a row opens its order, where its number's link leads; the delete button
// keeps its own meaning.
tbody.addEventListener("dblclick", (event) => {
  if (event.target.closest("button")) return;
  const link = event.target.closest("tr")?.querySelector("a[href]");
  if (link) window.location.assign(link.href);
});

const exportButton = document.getElementById("export");
const exportStatus = document.getElementById("export-status");

function exportFailed(status) {
  hide(exportStatus);
  exportButton.disabled = false;
  if (status !== 401) show(pageError, "Export failed");
}

exportButton.addEventListener("click", async () => {
  hide(pageError);
  exportButton.disabled = true;
  show(exportStatus, "Export running…");
  const started = await api("POST", "/api/exports");
  if (!started.ok || !started.data) return exportFailed(started.status);
  // Poll after each answer rather than on a fixed interval, so a slow server
  // (fault "latency") is not flooded with overlapping requests.
  const poll = async () => {
    const r = await api("GET", "/api/exports/" + started.data.id);
    if (!r.ok || !r.data) return exportFailed(r.status);
    if (r.data.status === "READY") {
      show(exportStatus, "Export ready: " + plural(r.data.rows));
      exportButton.disabled = false;
      // The file comes by itself, as "your download starts now" pages hand it out.
      const file = document.createElement("a");
      file.href = "/api/exports/" + started.data.id + "/orders.csv";
      file.download = "orders.csv";
      document.body.append(file);
      file.click();
      file.remove();
      return;
    }
    setTimeout(poll, 250);
  };
  setTimeout(poll, 250);
});

// Rows are dragged onto the pinned orders with the browser's drag and drop; the pins live as
// long as the page.
const pinned = document.getElementById("pinned");
const pinnedList = document.getElementById("pinned-list");
tbody.addEventListener("dragstart", (event) => {
  const row = event.target.closest("tr");
  if (!row) return;
  const [number, customer] = [...row.cells].map((cell) => cell.textContent.trim());
  event.dataTransfer.setData("text/plain", number + " " + customer);
  event.dataTransfer.effectAllowed = "copy";
});
pinned.addEventListener("dragover", (event) => event.preventDefault());
pinned.addEventListener("drop", (event) => {
  event.preventDefault();
  const order = event.dataTransfer.getData("text/plain");
  if (!order || [...pinnedList.children].some((item) => item.textContent === order)) return;
  const item = document.createElement("li");
  item.textContent = order;
  pinnedList.append(item);
  document.getElementById("pinned-empty").hidden = true;
});

const help = document.getElementById("help");
const helpTip = document.getElementById("help-tip");
const showTip = () => {
  helpTip.hidden = false;
};
const hideTip = () => {
  helpTip.hidden = true;
};
help.addEventListener("mouseenter", showTip);
help.addEventListener("mouseleave", hideTip);
help.addEventListener("focus", showTip);
help.addEventListener("blur", hideTip);
help.addEventListener("click", () => {
  helpTip.hidden = !helpTip.hidden;
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") hideTip();
});
