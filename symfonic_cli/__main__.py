from symfonic_cli.cli.app import main

main()
