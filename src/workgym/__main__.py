from workgym.apps.cli.main import main

main()
