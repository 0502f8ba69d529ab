const continueButton = document.getElementById("continue");
continueButton.addEventListener("click", () => {
  location.assign(continueButton.dataset.href);
});
