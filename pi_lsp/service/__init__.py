"""What the server offers, without pygls: services built in :mod:`pi_lsp.service.build`."""
