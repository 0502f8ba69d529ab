@api
Feature: The shop's API
  Orders can be made and read without the browser: the scenario talks to the shop's JSON API
  with Saffron's HTTP client (see docs/api.md).

  Scenario: An order made through the API reads back
    Given the API client has signed in as the demo user
    When the API client orders 2 "Tea" for "Lin"
    Then the API answers that the order was made for 900 cents
    And the order read back through the API holds 2 "Tea"
