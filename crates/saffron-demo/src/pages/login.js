"use strict";

const form = document.getElementById("login-form");
const problem = document.getElementById("login-error");

function showProblem(text) {
  problem.textContent = text;
  problem.hidden = false;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  problem.hidden = true;
  const credentials = {
    email: document.getElementById("email").value,
    password: document.getElementById("password").value,
  };
  try {
    const res = await fetch("/api/session", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(credentials),
    });
    if (res.ok) {
      location.assign("/orders");
      return;
    }
    showProblem(res.status === 401 ? "Email or password is wrong" : "Could not sign in");
  } catch (_) {
    showProblem("Could not sign in");
  }
  button.disabled = false;
});
