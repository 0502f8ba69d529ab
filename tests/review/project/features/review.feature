Feature: Review
  Scenario: Buy
    Given I am on the shop
    When I buy
