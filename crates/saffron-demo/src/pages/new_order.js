// Unit prices in cents, and the surcharge of defect "wrong-total" (0 when it is off): the
// server fills both in, so the live total and the saved total are computed the same way.
const PRICES = {{prices}};
const SURCHARGE_CENTS = {{surcharge_cents}};
// The field `POST /api/orders` reads the quantity from: `count` under drift "renamed-api-field".
const QUANTITY_FIELD = "{{quantity_field}}";

const form = document.getElementById("order-form");
const customer = document.getElementById("customer");
const quantity = document.getElementById("quantity");
const product = document.getElementById("product");
const gift = document.getElementById("gift");
const liveTotal = document.getElementById("order-total");
const customerError = document.getElementById("customer-error");
const quantityError = document.getElementById("quantity-error");
const saveError = document.getElementById("save-error");
// Absent under defect "missing-confirmation".
const confirmation = document.getElementById("confirmation");
const savedTotal = document.getElementById("saved-total");
const savedLinkLine = document.getElementById("saved-link-line");
const savedLink = document.getElementById("saved-link");
// Found by what it does, not by its markup: drift "relocated-save" renames and moves it.
const saveButton = [...form.elements].find((el) => el.type === "submit");

function validQuantity() {
  const q = Number(quantity.value);
  return quantity.value.trim() !== "" && Number.isInteger(q) && q >= 1 ? q : null;
}

function renderTotal() {
  const q = validQuantity();
  const cents = q === null ? 0 : PRICES[product.value] * q + SURCHARGE_CENTS;
  liveTotal.textContent = "Total: " + money(cents);
}

quantity.addEventListener("input", renderTotal);
quantity.addEventListener("change", renderTotal);
product.addEventListener("change", renderTotal);
// The browser may restore field values on back/forward navigation.
renderTotal();

function fieldError(input, box, message) {
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-describedby", box.id);
  show(box, message);
}

function clearFieldError(input, box) {
  input.removeAttribute("aria-invalid");
  input.removeAttribute("aria-describedby");
  hide(box);
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearFieldError(customer, customerError);
  clearFieldError(quantity, quantityError);
  hide(saveError);
  // A stale "Order saved" from an earlier save must not answer for this one.
  if (confirmation) hide(confirmation);
  hide(savedTotal);
  savedLinkLine.hidden = true;

  let firstInvalid = null;
  if (customer.value.trim() === "") {
    fieldError(customer, customerError, "Customer is required");
    firstInvalid = customer;
  }
  const q = validQuantity();
  if (q === null) {
    fieldError(quantity, quantityError, "Quantity must be at least 1");
    firstInvalid = firstInvalid || quantity;
  }
  if (firstInvalid) {
    firstInvalid.focus();
    return;
  }

  saveButton.disabled = true;
  const r = await api("POST", "/api/orders", {
    customer: customer.value.trim(),
    [QUANTITY_FIELD]: q,
    product: product.value,
    gift: gift.checked,
  });
  saveButton.disabled = false;
  if (r.status === 201 && r.data) {
    if (confirmation) show(confirmation, "Order saved");
    show(savedTotal, "Total: " + r.data.total);
    savedLink.href = "/orders/" + r.data.id;
    savedLink.textContent = "View order #" + r.data.id;
    savedLinkLine.hidden = false;
  } else if (r.status !== 401) {
    const detail = r.status === 400 && r.data && r.data.error ? ": " + r.data.error : "";
    show(saveError, "Could not save the order" + detail);
  }
});
