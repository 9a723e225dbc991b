module github.com/matchpoint-api/matchpoint/clients/go

go 1.24
