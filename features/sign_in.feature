@auth
Feature: Sign in
  People sign in with the email and password of their account.

  Scenario: Sign in with the demo account
    Given I am on the sign-in page
    When I sign in with the demo account
    Then I see the orders page
    And I see no console errors

  Scenario: A wrong password is refused
    Given I am on the sign-in page
    When I sign in with the password "not-the-password"
    Then I see the error "Email or password is wrong"
