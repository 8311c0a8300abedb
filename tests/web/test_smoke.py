def test_home_page_offers_to_create_a_table(client):
    response = client.get("/")
    assert response.status_code == 200
    assert b"Create a table" in response.data


def test_a_created_table_has_a_lobby_with_its_host(browser):
    ann = browser()
    code = ann.create("Ann")
    page = ann.page()
    assert f"Table {code}" in page
    assert "Ann" in page and "host" in page
